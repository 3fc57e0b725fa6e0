// The wire rules below the generated tables (Python: externspec._modelbase): a map's repeated keys, a
// union's one member, scalars; and what the decode entry asks of a backend and a document type.
// Part of wire.h (include <externspec/wire.h>), which includes the parts in order; each includes what it uses.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>
#include "../messages.h"
#include "issues.h"

namespace externspec {

namespace detail {

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
  std::string out = message(Message::UNION_ARITY, {{"union", name}, {"count", std::to_string(members.size())}});
  if (!members.empty()) {
    std::sort(members.begin(), members.end());
    std::string names;
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (i) names += ", ";
      names += members[i];
    }
    out += message(Message::UNION_MEMBERS_GIVEN, {{"members", names}});
  }
  return out;
}

// An integer outside its type's range: `text` as written, below `lo` or above `hi`.
[[noreturn]] inline void fail_int_range(const std::string& text, bool below, std::int64_t lo, std::int64_t hi) {
  const std::string bound = below ? message(Message::INT_AT_LEAST, {{"bound", std::to_string(lo)}})
                                  : message(Message::INT_AT_MOST, {{"bound", std::to_string(hi)}});
  fail(IssueKind::Range, message(Message::INT_OUT_OF_RANGE, {{"input", text}, {"bound", bound}}));
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
        if (x < lo || x > hi) fail_int_range(std::to_string(x), x < lo, lo, hi);
      }
      return static_cast<Int>(x);
    }
    case JsonKind::UInt:
    case JsonKind::BigInt: {
      std::string text = v.number_text();
      fail_int_range(text, !text.empty() && text[0] == '-', lo, hi);
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

}  // namespace detail
}  // namespace externspec
