// The limits a document is checked against and the errors externspec raises for bad input.
// Part of wire.h (include <externspec/wire.h>), which includes the parts in order; each includes what it uses.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace externspec {

namespace detail {
// The defaults, from the table Python reads too (wire/limits.def).
struct DecoderLimitDefaults {
#define ES_DECODER_LIMIT(name, value) static constexpr unsigned long long name = value;
#include "limits.def"
#undef ES_DECODER_LIMIT
};
}  // namespace detail

// A value (scalar or container) inside more than this many containers is rejected while parsing,
// as by Python's `externspec.MAX_JSON_DEPTH` (pydantic-core's parser limit); the top-level value is
// inside none. So containers nest at most 1 + 200 deep, and only the deepest may be empty.
// Define EXTERNSPEC_MAX_JSON_DEPTH to lower it (SECURITY.md).
#ifdef EXTERNSPEC_MAX_JSON_DEPTH
inline constexpr int MAX_JSON_DEPTH = EXTERNSPEC_MAX_JSON_DEPTH;
#else
inline constexpr int MAX_JSON_DEPTH = static_cast<int>(detail::DecoderLimitDefaults::MAX_JSON_DEPTH);
#endif
static_assert(MAX_JSON_DEPTH >= 0 && MAX_JSON_DEPTH <= static_cast<int>(detail::DecoderLimitDefaults::MAX_JSON_DEPTH),
              "EXTERNSPEC_MAX_JSON_DEPTH: 0..200, as Python");

// Documents larger than this many bytes are rejected before parsing, as Python's
// `externspec.wire.MAX_JSON_BYTES`. Define EXTERNSPEC_MAX_JSON_BYTES to change it; it must stay
// below 4 GiB (the nlohmann tape and simdjson use 32-bit offsets).
#ifdef EXTERNSPEC_MAX_JSON_BYTES
inline constexpr std::size_t MAX_JSON_BYTES = EXTERNSPEC_MAX_JSON_BYTES;
#else
inline constexpr std::size_t MAX_JSON_BYTES = detail::DecoderLimitDefaults::MAX_JSON_BYTES;
#endif
static_assert(MAX_JSON_BYTES < (std::size_t{1} << 32), "EXTERNSPEC_MAX_JSON_BYTES must be below 4 GiB");

// A failing document reports at most this many problems, as Python's
// `externspec.wire.MAX_DECODE_ERRORS`; the pass that collects them stops at the next one, so a
// document of a million bad values costs what a hundred do (SECURITY.md).
inline constexpr std::size_t MAX_DECODE_ERRORS = detail::DecoderLimitDefaults::MAX_DECODE_ERRORS;

// Base of every error externspec raises for bad input (Python: externspec.ExternSpecError).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One problem of a document, made where the decoder finds it (Python: externspec.errors.ErrorDetail).
// `kind` is one of Python's `externspec.errors.ERROR_KINDS` (error_kind_name in issues.h), `key` the key
// a `missing` or `unknown_key` problem names ("" otherwise).
struct ErrorDetail {
  std::string kind;
  std::string path;
  std::string message;
  std::string key;
};

// A document does not match the schema. what() is Python's str(DecodeError): the first problem
// as `$.json.path: message`, plus "(and N more)". `errors()` lists the problems in the order
// Python reports them, at most MAX_DECODE_ERRORS; `truncated()` says the document has more.
// `source` names the document (a file, a package member) in what(), as Python's `source`.
class DecodeError : public Error {
 public:
  explicit DecodeError(std::vector<ErrorDetail> errors, bool truncated = false, std::string source = {})
      : Error(render(errors, truncated, source)),
        errors_(std::move(errors)),
        truncated_(truncated),
        source_(std::move(source)) {}
  const std::string& path() const { return errors_.front().path; }
  const std::vector<ErrorDetail>& errors() const { return errors_; }
  bool truncated() const { return truncated_; }
  const std::string& source() const { return source_; }

 private:
  static std::string render(const std::vector<ErrorDetail>& errors, bool truncated, const std::string& source) {
    std::string out = source.empty() ? "" : source + ": ";
    if (errors.empty()) return out + "invalid document";
    out += errors.front().path + ": " + errors.front().message;
    if (truncated)
      out += " (and more: listing stopped after " + std::to_string(errors.size()) + " problems)";
    else if (errors.size() > 1)
      out += " (and " + std::to_string(errors.size() - 1) + " more)";
    return out;
  }
  std::vector<ErrorDetail> errors_;
  bool truncated_ = false;
  std::string source_;
};

// A document's schema version cannot be read by this version of externspec. what() is
// `path: message`; `path()` is what decided it ($.schema_version, or the object with a newer
// minor's key), `key()` that key ("" otherwise).
class VersionError : public Error {
 public:
  VersionError(std::string path, std::string message, std::string key = {})
      : Error(path + ": " + message), path_(std::move(path)), message_(std::move(message)), key_(std::move(key)) {}
  const std::string& path() const { return path_; }
  const std::string& message() const { return message_; }
  const std::string& key() const { return key_; }

 private:
  std::string path_, message_, key_;
};

// A union accessor was called for a member that is not the one set. A programming error, but a
// clear exception rather than undefined behaviour.
class UnionAccessError : public Error {
 public:
  using Error::Error;
};

}  // namespace externspec
