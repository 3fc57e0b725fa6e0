// ---- the public API (hand-written: codegen/cpp/api.inc.h) ----
namespace externspec {

struct NlohmannBackend;
// The backend `decode<T>(json)` uses when none is named: header-only nlohmann.
using DefaultBackend = NlohmannBackend;

namespace detail {

inline DecodeError to_decode_error(Failure& f) {
  std::vector<std::pair<std::string, std::string>> errors;
  for (auto& i : f.issues) errors.emplace_back("$" + i.path, std::move(i.message));
  if (errors.empty()) errors.emplace_back("$", "invalid document");
  return DecodeError(std::move(errors));
}

// One pass that stops at the first problem (the fast path); on failure, a second pass collects
// every problem in Python's order for the error message and the version decision.
template <class T, class V>
T decode_root(const V& root, bool strict) {
  using P = VersionPolicy<T>;
  const bool forbid = strict || P::forbid_unknown;
  try {
    T out{};
    decode_value(root, out, Ctx{forbid, false});
    P::check(out);
    return out;
  } catch (Failure&) {
  }
  Failure all;
  try {
    T out{};
    decode_value(root, out, Ctx{forbid, true});
  } catch (Failure& f) {
    all = std::move(f);
  }
  if (P::forbid_unknown && !strict) {
    auto version = P::raw_version(root);
    bool only_unknown = std::all_of(all.issues.begin(), all.issues.end(),
                                    [](const Issue& i) { return i.kind == IssueKind::Unknown; });
    if (!version && only_unknown) {
      // Torch-written: unknown keys are ignored, as torch does.
      Failure lenient;
      try {
        T out{};
        decode_value(root, out, Ctx{false, true});
        P::check(out);
        return out;
      } catch (Failure& f) {
        lenient = std::move(f);
      }
      throw to_decode_error(lenient);
    }
    P::check_raw(version, all.issues);
  }
  throw to_decode_error(all);
}

}  // namespace detail

// Decode JSON text into T. Throws DecodeError (JSON path of each problem) or VersionError.
// `strict` rejects unknown keys everywhere (Python: loads(..., strict=True)).
// The parser state is reused across calls on one thread (a per-thread Document), as simdjson
// recommends: buffers sized for the largest document so far stay allocated.
template <class T, class Backend = DefaultBackend>
T decode(std::string_view json, bool strict = false) {
  if (json.size() > MAX_JSON_BYTES)  // before any parsing or allocation, as Python
    throw DecodeError({{"$", "document of " + std::to_string(json.size()) + " bytes exceeds the size limit of " +
                                 std::to_string(MAX_JSON_BYTES) + " bytes"}});
  thread_local typename Backend::Document doc;
  std::optional<typename Backend::Value> root;
  try {
    root = doc.parse(json);
  } catch (detail::Failure& f) {
    if constexpr (detail::has_fallback<Backend>::value) {
      if (f.retry_with_fallback) return decode<T, typename Backend::Fallback>(json, strict);
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
