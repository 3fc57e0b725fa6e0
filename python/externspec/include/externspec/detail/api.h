// The public API: decode<T>, encode, DecodeError.
// Part of externspec.h, which includes it where the generated declarations it needs are
// visible; not a header to include on its own.
#pragma once

namespace externspec {

struct NlohmannBackend;
// The backend `decode<T>(json)` uses when none is named: header-only nlohmann.
using DefaultBackend = NlohmannBackend;

namespace detail {

inline DecodeError to_decode_error(Failure& f) {
  std::vector<ErrorDetail> errors;
  const bool truncated = f.issues.size() > MAX_DECODE_ERRORS;
  if (truncated) f.issues.resize(MAX_DECODE_ERRORS);
  for (auto& i : f.issues)
    errors.push_back(ErrorDetail{error_kind_name(i.kind), "$" + i.path, std::move(i.message), std::move(i.key)});
  if (errors.empty()) errors.push_back(ErrorDetail{error_kind_name(IssueKind::Syntax), "$", "invalid document", {}});
  return DecodeError(std::move(errors), truncated);
}

// Decodes `root` into a T: one pass that stops at the first problem (the fast path); on failure a
// second pass collects the problems in Python's order, at most MAX_DECODE_ERRORS + 1.
template <class T, class V>
T decode_pass(const V& root, bool forbid_unknown) {
  try {
    T out{};
    decode_value(root, out, Ctx{forbid_unknown, false});
    VersionPolicy<T>::check(out);
    return out;
  } catch (Failure&) {
  }
  Failure all;
  try {
    T out{};
    decode_value(root, out, Ctx{forbid_unknown, true});
  } catch (Failure& f) {
    all = std::move(f);
  }
  throw all;
}

// A versioned type is read strictly first. When that fails, the document's own version decides
// (Python: externspec.wire.loads): an unversioned (torch-written) one is read again with unknown
// keys ignored, as torch does, and its problems are those of that reading; a versioned one's
// problems may be a VersionError (a newer minor's keys).
template <class T, class V>
T decode_root(const V& root, bool strict) {
  using P = VersionPolicy<T>;
  try {
    return decode_pass<T>(root, strict || P::forbid_unknown);
  } catch (Failure& all) {
    if (!P::forbid_unknown || strict) throw to_decode_error(all);
    auto version = P::raw_version(root);
    if (version) {
      P::check_raw(version, all.issues);
      throw to_decode_error(all);
    }
  }
  try {
    return decode_pass<T>(root, false);
  } catch (Failure& lenient) {
    throw to_decode_error(lenient);
  }
}

}  // namespace detail

// Decode JSON text into T. Throws DecodeError (JSON path of each problem) or VersionError.
// `strict` rejects unknown keys everywhere (Python: loads(..., strict=True)).
// The parser state is reused across calls on one thread (a per-thread Document), as simdjson
// recommends: buffers sized for the largest document so far stay allocated.
// `max_bytes` lowers the size limit for this call (Python: loads(..., max_bytes=)); it cannot raise
// it past MAX_JSON_BYTES's bound of 4 GiB (the tape's 32-bit offsets).
template <class T, class Backend = DefaultBackend>
T decode(std::string_view json, bool strict = false, std::uint64_t max_bytes = MAX_JSON_BYTES) {
  constexpr std::uint64_t kTapeLimit = (std::uint64_t{1} << 32) - 1;
  const std::uint64_t limit = max_bytes < kTapeLimit ? max_bytes : kTapeLimit;
  if (json.size() > limit)  // before any parsing or allocation, as Python
    throw DecodeError({ErrorDetail{detail::error_kind_name(detail::IssueKind::Limit), "$",
                                   message(Message::DOCUMENT_TOO_LARGE, {{"size", std::to_string(json.size())},
                                                                         {"limit", std::to_string(limit)}}),
                                   {}}});
  thread_local typename Backend::Document doc;
  std::optional<typename Backend::Value> root;
  try {
    root = doc.parse(json);
  } catch (detail::Failure& f) {
    if constexpr (detail::has_fallback<Backend>::value) {
      if (f.retry_with_fallback) return decode<T, typename Backend::Fallback>(json, strict, max_bytes);
    }
    throw detail::to_decode_error(f);
  }
  return detail::decode_root<T>(*root, strict);
}

// Encode as the same bytes as Python's es.dumps: compact, every field in declaration order, nulls
// for unset optionals (fields annotated json.omit_if_null are left out), single-key unions.
template <class T>
std::string encode(const T& value) {
  std::string out;
  detail::encode_value(out, value);
  return out;
}

}  // namespace externspec
