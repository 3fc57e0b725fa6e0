// The schema-independent part of externspec's C++ decoder: errors, containers, scalar wire rules,
// the issue collector that builds JSON paths, and the JSON writer. The generated code in
// externspec.h is written against these helpers; JSON backends (backend_*.h) provide a `Value`.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace externspec {

// A value (scalar or container) inside more than this many containers is rejected while parsing,
// as by Python's `externspec.MAX_JSON_DEPTH` (pydantic-core's parser limit); the top-level value is
// inside none. So containers nest at most 1 + 200 deep, and only the deepest may be empty.
// Define EXTERNSPEC_MAX_JSON_DEPTH to lower it (SECURITY.md).
#ifndef EXTERNSPEC_MAX_JSON_DEPTH
#define EXTERNSPEC_MAX_JSON_DEPTH 200
#endif
inline constexpr int MAX_JSON_DEPTH = EXTERNSPEC_MAX_JSON_DEPTH;
static_assert(MAX_JSON_DEPTH >= 0 && MAX_JSON_DEPTH <= 200, "EXTERNSPEC_MAX_JSON_DEPTH: 0..200, as Python");

// Documents larger than this many bytes are rejected before parsing, as Python's
// `externspec.wire.MAX_JSON_BYTES`. Define EXTERNSPEC_MAX_JSON_BYTES to change it; it must stay
// below 4 GiB (the nlohmann tape and simdjson use 32-bit offsets).
#ifndef EXTERNSPEC_MAX_JSON_BYTES
#define EXTERNSPEC_MAX_JSON_BYTES (256u * 1024u * 1024u)
#endif
inline constexpr std::size_t MAX_JSON_BYTES = EXTERNSPEC_MAX_JSON_BYTES;
static_assert(MAX_JSON_BYTES < (std::size_t{1} << 32), "EXTERNSPEC_MAX_JSON_BYTES must be below 4 GiB");

// A failing document reports at most this many problems, as Python's
// `externspec.wire.MAX_DECODE_ERRORS`; the pass that collects them stops at the next one, so a
// document of a million bad values costs what a hundred do (SECURITY.md).
inline constexpr std::size_t MAX_DECODE_ERRORS = 100;

// Base of every error externspec raises for bad input (Python: externspec.ExternSpecError).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One problem of a document, made where the decoder finds it (Python: externspec.errors.ErrorDetail).
// `kind` is one of Python's `externspec.errors.ERROR_KINDS` (error_kind_name below), `key` the key
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

// A heap-allocated value with value semantics: breaks the cycle of recursive types (Graph inside
// Argument) while copying like a plain member.
template <class T>
class Box {
 public:
  Box() : p_(std::make_unique<T>()) {}
  Box(T value) : p_(std::make_unique<T>(std::move(value))) {}  // NOLINT: implicit on purpose
  Box(const Box& o) : p_(std::make_unique<T>(*o.p_)) {}
  Box(Box&& o) noexcept = default;
  Box& operator=(const Box& o) {
    if (this != &o) p_ = std::make_unique<T>(*o.p_);
    return *this;
  }
  Box& operator=(Box&& o) noexcept = default;
  ~Box() = default;
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }
  T& get() { return *p_; }
  const T& get() const { return *p_; }

 private:
  std::unique_ptr<T> p_;
};

// The IDL's constant lists and maps (`const list<...>`, `const map<string, ...>`) in C++:
// constant-initialized aggregates, so a translation unit that includes the header runs no static
// initializer and instantiates nothing for them. A list holds up to Capacity elements inline (the
// longest list in its position in the IDL); a map keeps the IDL's order and is searched linearly
// (constant maps have a handful of entries).
template <class T, std::size_t Capacity>
struct ConstList {
  std::array<T, Capacity> items;
  std::size_t count;

  constexpr const T* begin() const { return items.data(); }
  constexpr const T* end() const { return items.data() + count; }
  constexpr std::size_t size() const { return count; }
  constexpr const T& operator[](std::size_t i) const { return items[i]; }
  template <class U>
  constexpr bool contains(const U& value) const {
    for (const T& item : *this)
      if (item == value) return true;
    return false;
  }
};

template <class V, std::size_t N>
struct ConstMap {
  struct Entry {
    std::string_view key;
    V value;
  };
  std::array<Entry, N> entries;

  constexpr const Entry* begin() const { return entries.data(); }
  constexpr const Entry* end() const { return entries.data() + N; }
  static constexpr std::size_t size() { return N; }
  // The value of `key`, or nullptr.
  constexpr const V* find(std::string_view key) const {
    for (const Entry& e : entries)
      if (e.key == key) return &e.value;
    return nullptr;
  }
};

// A string-keyed map that keeps insertion order, so that decode -> encode reproduces the
// document's key order byte for byte (Python dicts do; std::map and unordered_map do not).
template <class V>
class OrderedMap {
 public:
  using value_type = std::pair<std::string, V>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  OrderedMap() = default;
  OrderedMap(std::initializer_list<value_type> items) {
    for (const auto& [k, v] : items) insert_or_assign(k, v);
  }

  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  void reserve(std::size_t n) { items_.reserve(n); }
  void clear() { items_.clear(); }

  const_iterator find(std::string_view key) const {
    for (auto it = items_.begin(); it != items_.end(); ++it)
      if (it->first == key) return it;
    return items_.end();
  }
  iterator find(std::string_view key) {
    for (auto it = items_.begin(); it != items_.end(); ++it)
      if (it->first == key) return it;
    return items_.end();
  }
  bool contains(std::string_view key) const { return find(key) != end(); }
  const V& at(std::string_view key) const {
    auto it = find(key);
    if (it == end()) throw std::out_of_range("externspec::OrderedMap: no key \"" + std::string(key) + "\"");
    return it->second;
  }
  V& at(std::string_view key) {
    auto it = find(key);
    if (it == end()) throw std::out_of_range("externspec::OrderedMap: no key \"" + std::string(key) + "\"");
    return it->second;
  }
  // Python dict semantics: an existing key keeps its position and takes the new value.
  V& insert_or_assign(std::string key, V value) {
    auto it = find(key);
    if (it != end()) {
      it->second = std::move(value);
      return it->second;
    }
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().second;
  }
  V& operator[](std::string_view key) {
    auto it = find(key);
    if (it != end()) return it->second;
    items_.emplace_back(std::string(key), V{});
    return items_.back().second;
  }
  // Append without a duplicate check (the decoder merges repeated keys itself: merge_repeated_keys).
  V& append_unchecked(std::string key) {
    items_.emplace_back(std::move(key), V{});
    return items_.back().second;
  }
  std::vector<value_type>& items() { return items_; }

 private:
  std::vector<value_type> items_;
};

// Name tables of the schema's enums: `EnumInfo<ScalarType>::entries` lists (value, name) pairs in
// schema order. Specialized for every generated enum.
template <class E>
struct EnumInfo;

// The schema name of an enum value ("" for a value the schema does not define).
template <class E, class = decltype(EnumInfo<E>::entries)>
std::string_view to_string(E value) {
  for (const auto& [v, name] : EnumInfo<E>::entries)
    if (v == value) return name;
  return {};
}

// The enum value of a schema name, if there is one.
template <class E>
std::optional<E> enum_from_string(std::string_view name) {
  for (const auto& [v, n] : EnumInfo<E>::entries)
    if (n == name) return v;
  return std::nullopt;
}

// The kinds of JSON value a backend reports. Int: fits int64; UInt: above int64 max but fits
// uint64; BigInt: an integer literal beyond uint64 (its double approximation is available).
enum class JsonKind : std::uint8_t { Null, Bool, Int, UInt, BigInt, Double, String, Array, Object };

namespace detail {

// What a problem is; the path is built while the exception unwinds, the innermost segment first.
enum class IssueKind : std::uint8_t { Limit, Union, Missing, Unknown, Enum, Range, Type, Encoding, Syntax };

// The kinds' names: Python's `externspec.errors.ERROR_KINDS` keys (tests/repo/test_error_records.py
// holds the two lists equal).
inline const char* error_kind_name(IssueKind kind) {
  switch (kind) {
    case IssueKind::Limit: return "limit";
    case IssueKind::Union: return "union";
    case IssueKind::Missing: return "missing";
    case IssueKind::Unknown: return "unknown_key";
    case IssueKind::Enum: return "enum";
    case IssueKind::Range: return "int_range";
    case IssueKind::Type: return "type";
    case IssueKind::Encoding: return "encoding";
    case IssueKind::Syntax: return "syntax";
  }
  return "syntax";
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
  fail(IssueKind::Type, std::string("expected `") + expected + "`, got `" + kind_name(got) + "`");
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
    for (auto k : keys_) c.here(IssueKind::Unknown, "unknown key `" + std::string(k) + "`", std::string(k));
  }

 private:
  bool collect_;
  std::vector<std::string_view> keys_;
};

// How the repeated keys of a decoded map merge (every member was appended in document order), as
// in a Python dict built from the same JSON: the first occurrence keeps its position and takes the
// last value. Positions are sorted by (key, position), O(n log n) whatever the keys are: there is
// no hash table for chosen keys to flood (an unseeded FNV-1a index once took 7 s on 100k keys).
// Worked out on the keys alone, so one sort serves every map type: the n keys are std::strings
// `stride` bytes apart from `keys`. Maps of up to 16 members sort on the stack.
struct KeyMerge {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> moves;  // (first position, last position) of a repeated key
  std::vector<bool> dropped;  // the positions the merge removes; empty: no key repeats
};

inline KeyMerge plan_key_merge(const char* keys, std::size_t stride, std::size_t n) {
  auto key = [&](std::uint32_t i) -> const std::string& {
    return *reinterpret_cast<const std::string*>(keys + i * stride);
  };
  constexpr std::size_t kOnStack = 16;
  std::uint32_t small[kOnStack];
  std::vector<std::uint32_t> large;
  std::uint32_t* order = small;
  if (n > kOnStack) {
    large.resize(n);
    order = large.data();
  }
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
  std::sort(order, order + n, [&](std::uint32_t a, std::uint32_t b) {
    int c = key(a).compare(key(b));
    return c < 0 || (c == 0 && a < b);
  });
  KeyMerge merge;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && key(order[j]) == key(order[i])) ++j;
    if (j - i > 1) {
      if (merge.dropped.empty()) merge.dropped.assign(n, false);
      merge.moves.emplace_back(order[i], order[j - 1]);
      for (std::size_t k = i + 1; k < j; ++k) merge.dropped[order[k]] = true;
    }
    i = j;
  }
  return merge;
}

// Merges the repeated keys of a decoded map's members (pairs of key and value) in place.
template <class Items>
void merge_repeated_keys(Items& items) {
  const std::size_t n = items.size();
  if (n < 2) return;
  const KeyMerge merge = plan_key_merge(reinterpret_cast<const char*>(&items[0].first), sizeof(items[0]), n);
  if (merge.dropped.empty()) return;
  for (const auto& [first, last] : merge.moves) items[first].second = std::move(items[last].second);
  std::size_t kept = 0;
  for (std::size_t r = 0; r < n; ++r) {
    if (merge.dropped[r]) continue;
    if (kept != r) items[kept] = std::move(items[r]);
    ++kept;
  }
  items.erase(items.begin() + static_cast<std::ptrdiff_t>(kept), items.end());
}

inline std::string union_arity_message(const char* name, std::vector<std::string_view> members) {
  std::string out = std::string("expected exactly one member of `") + name + "`, got " + std::to_string(members.size());
  if (!members.empty()) {
    std::sort(members.begin(), members.end());
    out += " (";
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (i) out += ", ";
      out += members[i];
    }
    out += ")";
  }
  return out;
}

template <class B, class = void>
struct has_fallback : std::false_type {};
template <class B>
struct has_fallback<B, std::void_t<typename B::Fallback>> : std::true_type {};

// How a document type is version-checked on load; specialized in externspec.h for each struct the
// IDL annotates with a `version_policy`. Unversioned types ignore unknown keys.
template <class T>
struct VersionPolicy {
  static constexpr bool forbid_unknown = false;
  static void check(const T&) {}
  template <class V>
  static std::optional<std::pair<std::int64_t, std::int64_t>> raw_version(const V&) {
    return std::nullopt;
  }
  static void check_raw(std::optional<std::pair<std::int64_t, std::int64_t>>, const std::vector<Issue>&) {}
};

// ---- scalar wire rules (Python: externspec._modelbase) ----

template <class V>
bool decode_bool(const V& v) {
  if (v.kind() != JsonKind::Bool) fail_type("bool", v.kind());
  return v.get_bool();
}

template <class Int, class V>
Int decode_int(const V& v) {
  constexpr auto lo = static_cast<std::int64_t>(std::numeric_limits<Int>::min());
  constexpr auto hi = static_cast<std::int64_t>(std::numeric_limits<Int>::max());
  switch (v.kind()) {
    case JsonKind::Int: {
      std::int64_t x = v.get_int();
      if constexpr (sizeof(Int) < sizeof(std::int64_t)) {
        if (x < lo)
          fail(IssueKind::Range, "integer " + std::to_string(x) +
                                     " out of range (input should be greater than or equal to " +
                                     std::to_string(lo) + ")");
        if (x > hi)
          fail(IssueKind::Range, "integer " + std::to_string(x) +
                                     " out of range (input should be less than or equal to " +
                                     std::to_string(hi) + ")");
      }
      return static_cast<Int>(x);
    }
    case JsonKind::UInt:
    case JsonKind::BigInt: {
      std::string text = v.number_text();
      bool negative = !text.empty() && text[0] == '-';
      fail(IssueKind::Range,
           "integer " + text + " out of range (input should be " +
               (negative ? "greater than or equal to " + std::to_string(lo) : "less than or equal to " + std::to_string(hi)) +
               ")");
    }
    default:
      fail_type("int", v.kind());
  }
}

template <class V>
double decode_double(const V& v) {
  switch (v.kind()) {
    case JsonKind::Double:
    case JsonKind::BigInt: return v.get_double();
    case JsonKind::Int: return static_cast<double>(v.get_int());
    case JsonKind::UInt: return static_cast<double>(v.get_uint());
    case JsonKind::String: {
      std::string_view s = v.get_string();
      if (s == "Infinity") return std::numeric_limits<double>::infinity();
      if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
      if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
      [[fallthrough]];
    }
    default:
      fail_type("float", v.kind());
  }
}

// ---- the writer: byte-identical to pydantic-core's model_dump_json ----

inline void write_string(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  out += '"';
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + start, i - start);
    start = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 0xF];
    }
  }
  out.append(s.data() + start, s.size() - start);
  out += '"';
}

inline void write_int(std::string& out, std::int64_t x) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  out.append(buf, r.ptr);
}

// Shortest round-trip digits, laid out as pydantic-core writes floats: fixed notation with a
// ".0" for decimal exponents in (-5, 16], else scientific with an explicit exponent sign ("1e+16",
// "1e-6"); non-finite values are the strings "Infinity", "-Infinity", "NaN".
inline void write_double(std::string& out, double x) {
  if (!std::isfinite(x)) {
    out += std::isnan(x) ? "\"NaN\"" : (x > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  // buf = [-]d[.ddd]e(+|-)XX
  std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));
  bool negative = sci[0] == '-';
  if (negative) sci.remove_prefix(1);
  std::size_t epos = sci.find('e');
  std::string digits;
  digits += sci[0];
  if (epos > 1) digits.append(sci.substr(2, epos - 2));
  int exp10 = 0;
  std::from_chars(sci.data() + epos + (sci[epos + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exp10);
  // value = 0.digits * 10^kk
  int n = static_cast<int>(digits.size());
  int kk = exp10 + 1;
  if (negative) out += '-';
  if (digits == "0") {
    out += "0.0";
    return;
  }
  if (kk > 0 && kk <= 16) {
    if (n <= kk) {
      out += digits;
      out.append(static_cast<std::size_t>(kk - n), '0');
      out += ".0";
    } else {
      out.append(digits, 0, static_cast<std::size_t>(kk));
      out += '.';
      out.append(digits, static_cast<std::size_t>(kk), std::string::npos);
    }
  } else if (kk > -5 && kk <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-kk), '0');
    out += digits;
  } else {
    out += digits[0];
    if (n > 1) {
      out += '.';
      out.append(digits, 1, std::string::npos);
    }
    out += 'e';
    int e = kk - 1;
    if (e >= 0) out += '+';
    out += std::to_string(e);
  }
}

inline void write_bool(std::string& out, bool b) { out += b ? "true" : "false"; }

}  // namespace detail
}  // namespace externspec
