// The codecs of scalars and containers (std::optional, std::vector, OrderedMap, Box).
// Part of externspec.h, which includes it where the generated declarations it needs are
// visible; not a header to include on its own.
#pragma once

namespace externspec {
namespace detail {

template <class V> void decode_value(const V& v, bool& out, const Ctx&) { out = decode_bool(v); }
template <class V> void decode_value(const V& v, std::int8_t& out, const Ctx&) { out = decode_int<std::int8_t>(v); }
template <class V> void decode_value(const V& v, std::int16_t& out, const Ctx&) { out = decode_int<std::int16_t>(v); }
template <class V> void decode_value(const V& v, std::int32_t& out, const Ctx&) { out = decode_int<std::int32_t>(v); }
template <class V> void decode_value(const V& v, std::int64_t& out, const Ctx&) { out = decode_int<std::int64_t>(v); }
template <class V> void decode_value(const V& v, double& out, const Ctx&) { out = decode_double(v); }
template <class V> void decode_value(const V& v, std::string& out, const Ctx&) {
  if (v.kind() != JsonKind::String) fail_type("str", v.kind());
  auto s = v.get_string();
  out.assign(s.data(), s.size());
}

template <class V, class T> void decode_value(const V& v, Box<T>& out, const Ctx& ctx);
template <class V, class T> void decode_value(const V& v, std::optional<T>& out, const Ctx& ctx);
template <class V, class T> void decode_value(const V& v, std::vector<T>& out, const Ctx& ctx);
template <class V, class T> void decode_value(const V& v, OrderedMap<T>& out, const Ctx& ctx);

template <class V, class T>
void decode_value(const V& v, Box<T>& out, const Ctx& ctx) {
  decode_value(v, *out, ctx);
}

// An optional field: null (or a missing key, handled by the struct) reads as unset.
template <class V, class T>
void decode_value(const V& v, std::optional<T>& out, const Ctx& ctx) {
  if (v.kind() == JsonKind::Null) {
    out.reset();
    return;
  }
  decode_value(v, out.emplace(), ctx);
}

template <class V, class T>
void decode_value(const V& v, std::vector<T>& out, const Ctx& ctx) {
  if (v.kind() != JsonKind::Array) fail_type("array", v.kind());
  out.clear();
  out.reserve(v.size());
  Collector c(ctx);
  std::size_t i = 0;
  v.for_each_element([&](const V& e) {
    if constexpr (std::is_same_v<T, bool>) {
      c.part_at_index(i, [&] { out.push_back(decode_bool(e)); });
    } else {
      out.emplace_back();
      c.part_at_index(i, [&] { decode_value(e, out.back(), ctx); });
    }
    ++i;
  });
  c.finish();
}

// A map keeps the document's key order. A repeated key keeps its first position and takes the
// last value, as a Python dict built from the same JSON does.
template <class V, class T>
void decode_value(const V& v, OrderedMap<T>& out, const Ctx& ctx) {
  if (v.kind() != JsonKind::Object) fail_type("object", v.kind());
  out.clear();
  out.reserve(v.size());
  auto& items = out.items();
  Collector c(ctx);
  v.for_each_member([&](std::string_view key, const V& m) {
    items.emplace_back(std::string(key), T{});
    c.part_at_key(key, [&] { decode_value(m, items.back().second, ctx); });
  });
  c.finish();
  merge_repeated_keys(items);
}

inline void encode_value(std::string& out, bool v) { write_bool(out, v); }
inline void encode_value(std::string& out, std::int8_t v) { write_int(out, v); }
inline void encode_value(std::string& out, std::int16_t v) { write_int(out, v); }
inline void encode_value(std::string& out, std::int32_t v) { write_int(out, v); }
inline void encode_value(std::string& out, std::int64_t v) { write_int(out, v); }
inline void encode_value(std::string& out, double v) { write_double(out, v); }
inline void encode_value(std::string& out, const std::string& v) { write_string(out, v); }

template <class T> void encode_value(std::string& out, const Box<T>& v);
template <class T> void encode_value(std::string& out, const std::optional<T>& v);
template <class T> void encode_value(std::string& out, const std::vector<T>& v);
template <class T> void encode_value(std::string& out, const OrderedMap<T>& v);

template <class T>
void encode_value(std::string& out, const Box<T>& v) {
  encode_value(out, *v);
}

template <class T>
void encode_value(std::string& out, const std::optional<T>& v) {
  if (v) encode_value(out, *v);
  else out += "null";
}

template <class T>
void encode_value(std::string& out, const std::vector<T>& v) {
  out += '[';
  bool first = true;
  for (const auto& e : v) {
    if (!first) out += ',';
    first = false;
    if constexpr (std::is_same_v<T, bool>) write_bool(out, e);
    else encode_value(out, e);
  }
  out += ']';
}

template <class T>
void encode_value(std::string& out, const OrderedMap<T>& v) {
  out += '{';
  bool first = true;
  for (const auto& [k, e] : v) {
    if (!first) out += ',';
    first = false;
    write_string(out, k);
    out += ':';
    encode_value(out, e);
  }
  out += '}';
}

}  // namespace detail
}  // namespace externspec
