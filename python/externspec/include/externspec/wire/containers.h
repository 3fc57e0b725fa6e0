// The value types the generated code is written with: Box (recursive types), the IDL's constant lists
// and maps, the order-keeping OrderedMap, and the enums' name tables.
// Part of wire.h (include <externspec/wire.h>), which includes the parts in order; each includes what it uses.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace externspec {

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

}  // namespace externspec
