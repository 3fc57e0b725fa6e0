// How the decoder reports a problem: the JSON kinds a backend reports, the issue (kind, path, message)
// made where it is found, and the collector that builds its JSON path while the exception unwinds.
// Part of wire.h (include <externspec/wire.h>), which includes the parts in order; each includes what it uses.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include "../messages.h"
#include "errors.h"

namespace externspec {

// The kinds of JSON value a backend reports. Int: fits int64; UInt: above int64 max but fits
// uint64; BigInt: an integer literal beyond uint64 (its double approximation is available).
enum class JsonKind : std::uint8_t { Null, Bool, Int, UInt, BigInt, Double, String, Array, Object };

namespace detail {

// What a problem is (wire/error_kinds.def, the table Python's `externspec.errors.ERROR_KINDS` is read
// from); the path is built while the exception unwinds, the innermost segment first.
enum class IssueKind : std::uint8_t {
#define ES_ERROR_KIND(enumerator, name, meaning) enumerator,
#include "error_kinds.def"
#undef ES_ERROR_KIND
};

// The kinds' names, as records and Python name them.
inline const char* error_kind_name(IssueKind kind) {
  static constexpr const char* names[] = {
#define ES_ERROR_KIND(enumerator, name, meaning) #name,
#include "error_kinds.def"
#undef ES_ERROR_KIND
  };
  return names[static_cast<std::size_t>(kind)];
}

struct Issue {
  IssueKind kind;
  std::string path;  // relative to the value being decoded when thrown ("" = that value)
  std::string message;
  std::string key = {};  // the key a Missing or Unknown issue names
};

// Thrown inside the decoder, caught and turned into DecodeError/VersionError at the top.
struct Failure {
  std::vector<Issue> issues;
  bool retry_with_fallback = false;  // the backend cannot read this document; its Fallback can
  bool counted = false;  // the issues are in Ctx::collected already (a Collector's, not a leaf's)
  void prefix(std::string_view segment) {
    for (auto& i : issues) i.path.insert(0, segment);
  }
};

[[noreturn]] inline void fail(IssueKind kind, std::string message) {
  Failure f;
  f.issues.push_back(Issue{kind, std::string(), std::move(message)});
  throw f;
}

// How unknown keys in structs are treated, and whether to stop at the first problem.
struct Ctx {
  bool forbid_unknown = false;
  bool collect = false;  // collect the problems, in Python's order (the slow, diagnostic pass)
  // Problems collected so far by the pass; at MAX_DECODE_ERRORS + 1 it stops (the document has
  // more than it reports).
  mutable std::size_t collected = 0;
  bool full() const { return collected > MAX_DECODE_ERRORS; }
};

inline const char* kind_name(JsonKind k) {
  switch (k) {
    case JsonKind::Null: return "null";
    case JsonKind::Bool: return "bool";
    case JsonKind::Int:
    case JsonKind::UInt:
    case JsonKind::BigInt: return "int";
    case JsonKind::Double: return "float";
    case JsonKind::String: return "str";
    case JsonKind::Array: return "array";
    case JsonKind::Object: return "object";
  }
  return "?";
}

[[noreturn]] inline void fail_type(const char* expected, JsonKind got) {
  fail(IssueKind::Type, message(Message::WRONG_TYPE, {{"expected", expected}, {"got", kind_name(got)}}));
}

// json.dumps(key) as Python renders it (ensure_ascii): map keys appear in paths as `["key"]`.
inline std::string python_json_string(std::string_view s) {
  std::string out = "\"";
  static const char* hex = "0123456789abcdef";
  auto u16 = [&](unsigned v) {
    out += "\\u";
    for (int sh = 12; sh >= 0; sh -= 4) out += hex[(v >> sh) & 0xF];
  };
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20 || c == 0x7f) u16(c); else out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // Decode one UTF-8 sequence (the backends validated it).
    unsigned cp = 0;
    int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
    cp = c & (0x3F >> extra);
    for (int k = 1; k <= extra && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    i += extra + 1;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      u16(0xD800 + (cp >> 10));
      u16(0xDC00 + (cp & 0x3FF));
    } else {
      u16(cp);
    }
  }
  return out + "\"";
}

// Runs the decoder of one part (field, element, map value) of a container: on failure prefixes
// the part's path segment; stops at the first problem, or collects them all in `collect` mode
// (a list or map still stops at its first bad element: the problems are bounded by the shape).
class Collector {
 public:
  explicit Collector(const Ctx& ctx) : ctx_(ctx) {}
  template <class F>
  void part_at_field(std::string_view name, F&& f) {
    try {
      f();
    } catch (Failure& e) {
      e.prefix("." + std::string(name));
      if (!ctx_.collect) throw;
      absorb(e);
    }
  }
  template <class F>
  void part_at_index(std::size_t index, F&& f) {
    try {
      f();
    } catch (Failure& e) {
      e.prefix("[" + std::to_string(index) + "]");
      if (!ctx_.collect) throw;
      absorb(e);
      finish();  // a container stops at its first bad element, as Python's (fail_fast) does
    }
  }
  template <class F>
  void part_at_key(std::string_view key, F&& f) {
    try {
      f();
    } catch (Failure& e) {
      e.prefix("[" + python_json_string(key) + "]");
      if (!ctx_.collect) throw;
      absorb(e);
      finish();
    }
  }
  // A problem of the container itself (missing or unknown key, union arity).
  void here(IssueKind kind, std::string message, std::string key = {}) {
    Failure f;
    f.issues.push_back(Issue{kind, std::string(), std::move(message), std::move(key)});
    if (!ctx_.collect) throw f;
    absorb(f);
  }
  bool ok() const { return pending_.issues.empty(); }
  void finish() {
    if (pending_.issues.empty()) return;
    pending_.counted = true;
    throw std::move(pending_);
  }

 private:
  // Keeps a part's problems; once the pass has more than MAX_DECODE_ERRORS, stops it (every
  // enclosing Collector passes the problems on without decoding further).
  void absorb(Failure& e) {
    if (!e.counted) ctx_.collected += e.issues.size();
    for (auto& i : e.issues) pending_.issues.push_back(std::move(i));
    if (ctx_.full()) finish();
  }
  const Ctx& ctx_;
  Failure pending_;
};

// Keys of an object that name no field. Reported after the fields' own problems, as Python
// does; structs record them only when unknown keys are forbidden, unions always.
class UnknownKeys {
 public:
  explicit UnknownKeys(const Ctx& ctx) : collect_(ctx.collect) {}
  void add(std::string_view key) {
    if (keys_.empty() || collect_) keys_.push_back(key);
  }
  void report(Collector& c) const {
    for (auto k : keys_) c.here(IssueKind::Unknown, message(Message::UNKNOWN_KEY, {{"key", k}}), std::string(k));
  }

 private:
  bool collect_;
  std::vector<std::string_view> keys_;
};

}  // namespace detail
}  // namespace externspec
