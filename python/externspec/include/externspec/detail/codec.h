// The codec of structs, unions and enums: one engine over the generated tables.
// Part of externspec.h, which includes it where the generated declarations it needs are
// visible; not a header to include on its own.
#pragma once

// The generated code declares data: per struct a table of its fields (`Fields<T>`), per union its
// name (`UnionInfo<U>`; the members are its variant's alternatives, named by U::member_names), per
// enum its name table (`EnumInfo<E>`). The wire rules live here, once, as Python keeps them in
// externspec._modelbase: which keys name fields, unknown keys, missing required fields, the order
// problems are reported in, a union's one non-null member, an enum's values. The engine works on
// type-erased objects, reaching each member through the table (a small decoder per field, an
// encoder per member type), so a schema compiles to a few shared functions rather than one
// unrolled function per type.

namespace externspec {
namespace detail {

// How a struct field may be absent from a document.
enum class Presence : std::uint8_t {
  Required,   // absent: "missing required field"
  Optional,   // a std::optional member: absent (or null) reads as unset
  Defaulted,  // absent: the member keeps its default
};

// The member pointer M = &C::m, as its type and an accessor on a type-erased C.
template <auto M>
struct MemberOf;
template <class C, class T, T C::*M>
struct MemberOf<M> {
  using Type = T;
  static void* at(void* object) { return &(static_cast<C*>(object)->*M); }
};

// Decodes member M of the struct at `object` (one call per field: a scalar's decoder is inlined).
template <class V, auto M>
void decode_member(const V& v, void* object, const Ctx& ctx) {
  decode_value(v, *static_cast<typename MemberOf<M>::Type*>(MemberOf<M>::at(object)), ctx);
}
template <class T>
void encode_erased(std::string& out, const void* value) {
  encode_value(out, *static_cast<const T*>(value));
}
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
// An optional member holds a value; any other member always does.
template <class T>
bool has_value(const void* value) {
  if constexpr (is_optional<T>::value) return static_cast<const T*>(value)->has_value();
  else return true;
}

// A table's view of a member: for the decoder of backend value V, or for the encoder.
template <class V>
struct Decoding {
  struct Slot {
    void (*decode)(const V&, void* object, const Ctx&);
  };
  template <auto M>
  static constexpr Slot slot_of{&decode_member<V, M>};
};
struct Encoding {
  struct Slot {
    void* (*at)(void*);
    void (*encode)(std::string&, const void*);
    bool (*has_value)(const void*);
  };
  template <auto M>
  static constexpr Slot slot_of{&MemberOf<M>::at, &encode_erased<typename MemberOf<M>::Type>,
                                &has_value<typename MemberOf<M>::Type>};
};
template <class Op, auto M>
inline constexpr typename Op::Slot slot = Op::template slot_of<M>;

// One entry of a struct's field table, in declaration order.
template <class Op>
struct Field {
  std::string_view name;  // the JSON key
  Presence presence;
  typename Op::Slot slot;
  bool omit_if_null = false;  // an unset optional is left out of the JSON (json.omit_if_null), not written null
};

// Specialized in externspec.h: `template <class Op> static constexpr std::array<Field<Op>, N> table`.
template <class T>
struct Fields;
// Specialized in externspec.h: `static constexpr const char* name`, the union's schema name.
template <class U>
struct UnionInfo;

// Whether a key is a name: byte by byte, as keys are short (a call to memcmp costs more).
inline bool same_key(std::string_view key, std::string_view name) {
  if (key.size() != name.size()) return false;
  for (std::size_t i = 0; i < key.size(); ++i)
    if (key[i] != name[i]) return false;
  return true;
}

// The index of `key` among n names (name(i) is the i-th), or -1. Documents usually list the keys
// in declaration order (encode and Python write them so): the search starts at the name after the
// previous match, `next`, and wraps around.
template <class Name>
int find_key(std::string_view key, std::size_t n, Name name, std::size_t& next) {
  std::size_t i = next < n ? next : 0;
  for (std::size_t tried = 0; tried < n; ++tried) {
    if (same_key(key, name(i))) {
      next = i + 1;
      return static_cast<int>(i);
    }
    if (++i == n) i = 0;
  }
  return -1;
}

// Decodes the object `v` into the struct `out` of n fields; slot and seen hold n entries.
template <class V>
void decode_fields(const V& v, void* out, const Field<Decoding<V>>* fields, std::size_t n, V* slot, bool* seen,
                   const Ctx& ctx) {
  if (v.kind() != JsonKind::Object) fail_type("object", v.kind());
  UnknownKeys unknown(ctx);
  std::size_t next = 0;
  v.for_each_member([&](std::string_view key, const V& m) {
    int i = find_key(key, n, [&](std::size_t k) { return fields[k].name; }, next);
    if (i >= 0) {
      slot[i] = m;  // a repeated key: the last one counts, as in Python
      seen[i] = true;
    } else if (ctx.forbid_unknown) {
      unknown.add(key);
    }
  });
  Collector c(ctx);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& f = fields[i];
    if (seen[i])
      c.part_at_field(f.name, [&] { f.slot.decode(slot[i], out, ctx); });
    else if (f.presence == Presence::Required)
      c.here(IssueKind::Missing, message(Message::MISSING_FIELD, {{"key", f.name}}), std::string(f.name));
  }
  unknown.report(c);
  c.finish();
}

template <class V, class T>
void decode_struct(const V& v, T& out, const Ctx& ctx) {
  constexpr auto& fields = Fields<T>::template table<Decoding<V>>;
  std::array<V, fields.size()> slot;
  std::array<bool, fields.size()> seen{};
  decode_fields(v, &out, fields.data(), fields.size(), slot.data(), seen.data(), ctx);
}

// Every field in declaration order: a compact object, unset optionals written null unless omitted.
inline void encode_fields(std::string& out, const void* value, const Field<Encoding>* fields, std::size_t n) {
  void* object = const_cast<void*>(value);  // only read: the table's accessors take a mutable object
  out += '{';
  bool first = true;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& f = fields[i];
    const void* member = f.slot.at(object);
    if (f.omit_if_null && !f.slot.has_value(member)) continue;
    if (!first) out += ',';
    first = false;
    out += '"';
    out += f.name;
    out += "\":";
    f.slot.encode(out, member);
  }
  out += '}';
}

template <class T>
void encode_struct(std::string& out, const T& value) {
  constexpr auto& fields = Fields<T>::template table<Encoding>;
  encode_fields(out, &value, fields.data(), fields.size());
}

// A union member I: decode a value of its type, then make it the member that is set (the variant
// emplace the union's own set_ accessor instantiates, so the decoder adds no other). The decoder
// of V, and for the encoder the member's value and its encoder.
template <class V, class U, std::size_t I>
void decode_alternative(const V& v, void* u, const Ctx& ctx) {
  std::variant_alternative_t<I, typename U::Variant> member{};
  decode_value(v, member, ctx);
  static_cast<U*>(u)->variant().template emplace<I>(std::move(member));
}
template <class V>
using AlternativeDecoder = void (*)(const V&, void*, const Ctx&);
struct AlternativeWriter {
  const void* (*get)(const void*);
  void (*encode)(std::string&, const void*);
};

template <class U, std::size_t I>
const void* get_alternative(const void* u) {
  return std::get_if<I>(&static_cast<const U*>(u)->variant());
}
template <class V, class U, std::size_t... I>
constexpr std::array<AlternativeDecoder<V>, sizeof...(I)> alternative_decoders(std::index_sequence<I...>) {
  return {{&decode_alternative<V, U, I>...}};
}
template <class U, std::size_t... I>
constexpr std::array<AlternativeWriter, sizeof...(I)> alternative_writers(std::index_sequence<I...>) {
  return {{{&get_alternative<U, I>, &encode_erased<std::variant_alternative_t<I, typename U::Variant>>}...}};
}

// Decodes the object `v` into the union `out` named `name` of n members; slot and seen hold n
// entries. Exactly one key, a member, whose value is not null.
template <class V>
void decode_members(const V& v, void* out, const char* name, const std::string_view* names,
                    const AlternativeDecoder<V>* members, std::size_t n, V* slot, bool* seen, const Ctx& ctx) {
  if (v.kind() != JsonKind::Object) fail_type("object", v.kind());
  UnknownKeys unknown(ctx);
  std::size_t next = 0;
  v.for_each_member([&](std::string_view key, const V& m) {
    int i = find_key(key, n, [&](std::size_t k) { return names[k]; }, next);
    if (i >= 0) {
      slot[i] = m;
      seen[i] = true;
    } else {
      unknown.add(key);  // unions refuse unknown keys whatever the Ctx says
    }
  });
  Collector c(ctx);
  std::size_t count = 0, last = 0;
  bool null_member = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (!seen[i]) continue;
    ++count;
    last = i;
    if (slot[i].kind() == JsonKind::Null) {
      null_member = true;
      continue;
    }
    c.part_at_field(names[i], [&] { members[i](slot[i], out, ctx); });
  }
  unknown.report(c);
  if (c.ok()) {
    if (count != 1) {
      std::vector<std::string_view> set;
      for (std::size_t i = 0; i < n; ++i)
        if (seen[i]) set.push_back(names[i]);
      c.here(IssueKind::Union, union_arity_message(name, set));
    } else if (null_member) {
      c.here(IssueKind::Union, message(Message::UNION_MEMBER_NULL, {{"member", names[last]}, {"union", name}}));
    }
  }
  c.finish();
}

template <class V, class U>
void decode_union(const V& v, U& out, const Ctx& ctx) {
  constexpr std::size_t n = U::member_names.size();
  static constexpr auto members = alternative_decoders<V, U>(std::make_index_sequence<n>{});
  std::array<V, n> slot;
  std::array<bool, n> seen{};
  decode_members(v, &out, UnionInfo<U>::name, U::member_names.data(), members.data(), n, slot.data(), seen.data(),
                 ctx);
}

// A single-key object: the member that is set, and its value.
inline void encode_member(std::string& out, const void* u, std::size_t index, const std::string_view* names,
                          const AlternativeWriter* members, std::size_t n) {
  if (index < n) {
    out += "{\"";
    out += names[index];
    out += "\":";
    members[index].encode(out, members[index].get(u));
  }
  out += '}';
}

template <class U>
void encode_union(std::string& out, const U& value) {
  constexpr std::size_t n = U::member_names.size();
  static constexpr auto members = alternative_writers<U>(std::make_index_sequence<n>{});
  encode_member(out, &value, value.variant().index(), U::member_names.data(), members.data(), n);
}

// An enum's values in schema order, as its errors list them: "0, 1, 2 or 3".
template <class E>
std::string allowed_values() {
  constexpr auto& entries = EnumInfo<E>::entries;
  std::string out;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i) out += i + 1 == entries.size() ? " or " : ", ";
    out += std::to_string(static_cast<std::int64_t>(entries[i].first));
  }
  return out;
}

// An enum value, strictly: a JSON integer that names a value of E. Any other JSON type (a name, a
// bool, a float) is a type problem, as in Python: enums are integers on the wire.
template <class E, class V>
E decode_enum(const V& v) {
  switch (v.kind()) {
    case JsonKind::Int: {
      const std::int64_t n = v.get_int();
      for (const auto& entry : EnumInfo<E>::entries)
        if (static_cast<std::int64_t>(entry.first) == n) return entry.first;
      fail(IssueKind::Enum,
           message(Message::ENUM_VALUE_INVALID, {{"input", std::to_string(n)}, {"allowed", allowed_values<E>()}}));
    }
    case JsonKind::UInt:
    case JsonKind::BigInt:
      fail(IssueKind::Enum,
           message(Message::ENUM_VALUE_INVALID, {{"input", v.number_text()}, {"allowed", allowed_values<E>()}}));
    default:
      fail_type("int", v.kind());
  }
}

}  // namespace detail
}  // namespace externspec
