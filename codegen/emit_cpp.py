"""C++ emitter: IR -> python/externspec/include/externspec/externspec.h.

A pure function of the IR: `emit(schema)` returns {file name: text}, byte-deterministic.

* `externspec.h` (generated from the IR): plain structs, `enum class`es with the schema's numbering
  and name tables, unions as a `std::variant` in declaration order with checked accessors, the
  constants, and the codec as data: a constexpr field table per struct (JSON name, member pointer,
  required/optional/defaulted, omit-if-null) and a name per union. It includes the
  schema-independent `wire.h` first and the default JSON backend last.
* The hand-written headers beside it (include/externspec/: `wire.h`, `backend_*.h` and the
  `detail/` parts of externspec.h) are edited where they ship. externspec.h `#include`s the
  `detail/` headers where the generated declarations they need are visible: the container codecs
  and the engine that decodes and encodes structs, unions and enums by their tables (written
  against a backend-neutral `Value` concept) after the codec's forward declarations, the version
  policy after the constants, then the public `decode`/`encode` and separate compilation.

Recursion: containers (std::vector, OrderedMap) hold incomplete types, so only values held by value
need ordering. A struct-typed field inside a recursive group is boxed (`Box<Graph>` in
GraphArgument), which breaks the cycle and keeps the union `Argument` small; the remaining by-value
uses are ordered topologically.
"""

from __future__ import annotations

from . import ir
from .naming import banner, boxed_fields, definition_order, ident

_BASE = {
    "bool": "bool",
    "byte": "std::int8_t",
    "i16": "std::int16_t",
    "i32": "std::int32_t",
    "i64": "std::int64_t",
    "double": "double",
    "string": "std::string",
    "binary": "std::string",
}

def cpp_type(t: ir.TypeRef) -> str:
    if t.kind == "base":
        return _BASE[t.name]
    if t.kind == "named":
        return t.name
    if t.kind in ("list", "set"):
        return f"std::vector<{cpp_type(t.args[0])}>"
    return f"OrderedMap<{cpp_type(t.args[1])}>"  # string keys: codegen.lint checks it


def _field_type(s: ir.Struct, f: ir.Field, boxed: frozenset[tuple[str, str]]) -> str:
    inner = cpp_type(f.type)
    if (s.name, f.name) in boxed:
        inner = f"Box<{inner}>"
    return f"std::optional<{inner}>" if f.is_optional else inner


def _string_literal(s: str) -> str:
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 0x20 or ord(ch) > 0x7E:
            out.append("".join(f"\\x{b:02x}" for b in ch.encode("utf-8")) + '""')
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _literal(schema: ir.Schema, t: ir.TypeRef, value: ir.ConstValue) -> str:
    """A C++ initializer for a constant of type `t`."""
    if t.kind == "named":
        target = schema.type(t.name)
        if isinstance(target, ir.Enum):
            member = next(v.name for v in target.values if v.value == value)
            return f"{t.name}::{ident(member)}"
        assert isinstance(value, ir.ConstMap)
        given = dict(value.items)
        parts = []
        for f in target.fields:
            if f.name in given:
                parts.append(_literal(schema, f.type, given[f.name]))
            elif f.has_default and not f.is_optional:
                parts.append(_literal(schema, f.type, f.default))
            else:
                parts.append("{}")
        return f"{t.name}{{{', '.join(parts)}}}"
    if t.kind in ("list", "set"):
        assert isinstance(value, tuple)
        return "{" + ", ".join(_literal(schema, t.args[0], v) for v in value) + "}"
    if t.kind == "map":
        assert isinstance(value, ir.ConstMap)
        return "{" + ", ".join(
            f"{{{_literal(schema, t.args[0], k)}, {_literal(schema, t.args[1], v)}}}" for k, v in value.items
        ) + "}"
    if t.name == "bool":
        return "true" if value else "false"
    if t.name == "double":
        return repr(float(value))  # type: ignore[arg-type]
    if t.name in ("string", "binary"):
        return _string_literal(str(value))
    return str(value)


def _comment(doc: str, indent: str) -> list[str]:
    return [f"{indent}// {line}".rstrip() for line in doc.splitlines()]


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------


def _emit_enum(e: ir.Enum) -> list[str]:
    out = _comment(e.doc, "")
    out.append(f"enum class {e.name} : std::int32_t {{")
    for v in e.values:
        out += _comment(v.doc, "  ")
        out.append(f"  {ident(v.name)} = {v.value},")
    out.append("};")
    entries = ", ".join(f"{{{e.name}::{ident(v.name)}, {_string_literal(v.name)}}}" for v in e.values)
    out += [
        "template <>",
        f"struct EnumInfo<{e.name}> {{",
        f"  static constexpr std::string_view name = {_string_literal(e.name)};",
        f"  static constexpr std::array<std::pair<{e.name}, std::string_view>, {len(e.values)}> entries = "
        f"{{{{{entries}}}}};",
        "};",
    ]
    return out


def _emit_struct_type(s: ir.Struct, schema: ir.Schema, boxed: frozenset[tuple[str, str]]) -> list[str]:
    out = _comment(s.doc, "")
    out.append(f"struct {s.name} {{")
    for f in s.fields:
        out += _comment(f.doc, "  ")
        init = ""
        if not f.is_optional and f.has_default:
            init = f" = {_literal(schema, f.type, f.default)}"
        elif f.type.kind == "base" and f.type.name not in ("string", "binary") and not f.is_optional:
            init = "{}"
        out.append(f"  {_field_type(s, f, boxed)} {ident(f.name)}{init};")
    out.append("};")
    return out


def _emit_union_type(u: ir.Struct) -> list[str]:
    name = u.name
    types = [cpp_type(f.type) for f in u.fields]
    out = _comment(u.doc, "")
    out += [
        "// Exactly one member is set; the accessor of another member throws UnionAccessError.",
        f"class {name} {{",
        " public:",
        "  // Members in declaration order; the tag is the index of the member that is set.",
        "  enum class Tag : std::uint8_t {",
        *[f"    {ident(f.name)} = {i}," for i, f in enumerate(u.fields)],
        "  };",
        f"  using Variant = std::variant<{', '.join(types)}>;",
        f"  static constexpr std::array<std::string_view, {len(u.fields)}> member_names = {{{{"
        + ", ".join(_string_literal(f.name) for f in u.fields) + "}};",
        "",
        "  Tag tag() const noexcept { return static_cast<Tag>(value_.index()); }",
        "  // The name of the member that is set (Python: `.type`).",
        "  std::string_view type() const noexcept { return member_names[value_.index()]; }",
        "  const Variant& variant() const noexcept { return value_; }",
        "  Variant& variant() noexcept { return value_; }",
    ]
    for i, (f, t) in enumerate(zip(u.fields, types, strict=True)):
        m = ident(f.name)
        out += [""]
        out += _comment(f.doc, "  ")
        out += [
            f"  bool is_{f.name}() const noexcept {{ return value_.index() == {i}; }}",
            f"  const {t}& {m}() const {{ check({i}); return std::get<{i}>(value_); }}",
            f"  {t}& {m}() {{ check({i}); return std::get<{i}>(value_); }}",
            f"  {t}& set_{f.name}({t} v) {{ return value_.template emplace<{i}>(std::move(v)); }}",
            f"  static {name} make_{f.name}({t} v) {{ {name} u; u.set_{f.name}(std::move(v)); return u; }}",
        ]
    out += [
        "",
        " private:",
        "  void check(std::size_t i) const {",
        "    if (value_.index() != i)",
        f'      throw UnionAccessError(std::string("{name} holds `") + std::string(type()) + "`, not `" +',
        '                             std::string(member_names[i]) + "`");',
        "  }",
        "  Variant value_;",
        "};",
    ]
    return out


def _presence(f: ir.Field) -> str:
    if f.is_optional:
        return "Optional"
    return "Defaulted" if f.has_default else "Required"


def _emit_struct_codec(s: ir.Struct) -> list[str]:
    """The struct's field table; the engine (detail/codec.h) decodes and encodes by it."""
    rows = []
    for f in s.fields:
        row = f"{_string_literal(f.name)}, Presence::{_presence(f)}, slot<Op, &{s.name}::{ident(f.name)}>"
        if f.is_optional and f.omit_if_null:
            row += ", true"
        rows.append(f"      {{{row}}},")
    table = f"  static constexpr std::array<Field<Op>, {len(s.fields)}> table"
    out = ["template <>", f"struct Fields<{s.name}> {{", "  template <class Op>"]
    out += [table + "{{", *rows, "  }};"] if rows else [table + "{};"]
    out += [
        "};",
        f"template <class V> void decode_value(const V& v, {s.name}& out, const Ctx& ctx) {{ "
        "decode_struct(v, out, ctx); }",
        f"template <class Out> void encode_value(Out& out, const {s.name}& v) {{ encode_struct(out, v); }}",
        "",
    ]
    return out


def _emit_union_codec(u: ir.Struct) -> list[str]:
    """The union's name; its members are its variant's alternatives, named by member_names."""
    return [
        "template <>",
        f"struct UnionInfo<{u.name}> {{",
        f"  static constexpr const char* name = {_string_literal(u.name)};",
        "};",
        f"template <class V> void decode_value(const V& v, {u.name}& out, const Ctx& ctx) {{ "
        "decode_union(v, out, ctx); }",
        f"template <class Out> void encode_value(Out& out, const {u.name}& v) {{ encode_union(out, v); }}",
        "",
    ]


def _emit_enum_codec(e: ir.Enum) -> list[str]:
    """The enum's values are its EnumInfo; decode_enum reads by it."""
    return [
        f"template <class V> void decode_value(const V& v, {e.name}& out, const Ctx&) {{ "
        f"out = decode_enum<{e.name}>(v); }}",
        f"inline void encode_value(std::string& out, {e.name} v) {{ write_int(out, static_cast<std::int64_t>(v)); }}",
        "",
    ]


def _emit_forward_decls(order: tuple[ir.TypeDef, ...]) -> list[str]:
    """The codec's overloads, declared before the engine that calls them. A struct's or union's
    encoder is a template over its output (always std::string), like the decoder over its backend's
    value: a non-template inline function would instantiate the whole encoder in every translation
    unit that includes the header, used or not."""
    out = []
    for t in order:
        if isinstance(t, ir.Enum):
            out.append(f"template <class V> void decode_value(const V& v, {t.name}& out, const Ctx& ctx);")
            out.append(f"inline void encode_value(std::string& out, {t.name} v);")
        else:
            out.append(f"template <class V> void decode_value(const V& v, {t.name}& out, const Ctx& ctx);")
            out.append(f"template <class Out> void encode_value(Out& out, const {t.name}& v);")
    return out


def _emit_consts(schema: ir.Schema) -> list[str]:
    """The IDL's constants, `inline constexpr` wherever C++17 allows: strings as string_view, lists
    and string-keyed maps as ConstList/ConstMap (wire.h), structs of scalars as themselves. Only a
    constant outside those shapes (a struct holding strings, a map nested in a list) falls back to
    `inline const` of its field type, which costs a static initializer in every translation unit."""
    out = [f"inline constexpr std::string_view IDL_CHECKSUM = {_string_literal(schema.checksum)};"]
    for c in schema.consts:
        out += ["", *_comment(c.doc, "")]
        const_type = _const_type(schema, c.type, [c.value])
        if const_type is None:
            out.append(f"inline const {cpp_type(c.type)} {c.name} = {_literal(schema, c.type, c.value)};")
        else:
            out.append(f"inline constexpr {const_type} {c.name} = {_const_literal(schema, c.type, c.value)};")
    return out


def _const_type(schema: ir.Schema, t: ir.TypeRef, values: list[ir.ConstValue]) -> str | None:
    """The constexpr C++ type of constants of type `t` whose values (at this position) are `values`,
    or None when C++17 has no constant-initialized form for it."""
    if t.kind == "base":
        return "std::string_view" if t.name in ("string", "binary") else _BASE[t.name]
    if t.kind == "named":
        target = schema.type(t.name)
        if isinstance(target, ir.Enum):
            return t.name
        scalar = all((f.type.kind == "base" and f.type.name not in ("string", "binary"))
                     or (f.type.kind == "named" and isinstance(schema.type(f.type.name), ir.Enum))
                     for f in target.fields)
        return t.name if scalar and target.kind != "union" else None
    lists = [v for v in values if isinstance(v, tuple)]
    if t.kind in ("list", "set"):
        element = _const_type(schema, t.args[0], [e for v in lists for e in v])
        return None if element is None else f"ConstList<{element}, {max(map(len, lists), default=0)}>"
    maps = [v for v in values if isinstance(v, ir.ConstMap)]
    if len(maps) != 1 or t.args[0].kind != "base" or t.args[0].name != "string":
        return None  # a map nested in a list would need one size for maps of different sizes
    value = _const_type(schema, t.args[1], [v for _, v in maps[0].items])
    return None if value is None else f"ConstMap<{value}, {len(maps[0].items)}>"


def _const_literal(schema: ir.Schema, t: ir.TypeRef, value: ir.ConstValue) -> str:
    """The initializer of a constant of _const_type: aggregate braces for ConstList and ConstMap."""
    if t.kind in ("list", "set"):
        assert isinstance(value, tuple)
        return "{{{" + ", ".join(_const_literal(schema, t.args[0], v) for v in value) + f"}}}}, {len(value)}}}"
    if t.kind == "map":
        assert isinstance(value, ir.ConstMap)
        return "{{{" + ", ".join(
            f"{{{_literal(schema, t.args[0], k)}, {_const_literal(schema, t.args[1], v)}}}" for k, v in value.items
        ) + "}}}"
    return _literal(schema, t, value)


def emit_header(schema: ir.Schema) -> str:
    boxed = boxed_fields(schema)
    order = definition_order(schema)
    out = [*banner(schema, "//")]
    out += [
        "//",
        "// externspec's C++ types and JSON codec. Usage (C++17, default backend header-only):",
        "//   #include <externspec/externspec.h>",
        "//   auto nodes = externspec::decode<externspec::ExternKernelNodes>(json_text);",
        "//   std::string json = externspec::encode(nodes);  // the bytes of Python's es.dumps",
        "// Compile with -std=c++17 -I$(python -c 'import externspec; print(externspec.get_include())').",
        "// Define EXTERNSPEC_NO_DEFAULT_BACKEND to leave out the nlohmann backend.",
        "//",
        "// Separate compilation (a program with several decoding translation units): define",
        "// EXTERNSPEC_SEPARATE_CODEC in all of them, which then see the types and declarations only (no",
        "// nlohmann, no codec instantiations), and compile the codec once, in one .cpp of the program:",
        "//   #define EXTERNSPEC_CODEC_DEFINITIONS",
        "//   #include <externspec/externspec.h>",
        "#pragma once",
        "",
        "#include <array>",
        "",
        '#include "wire.h"',
        "",
        "namespace externspec {",
        "",
    ]
    for t in schema.types:
        if isinstance(t, ir.Struct):
            out.append(f"{'class' if t.kind == 'union' else 'struct'} {t.name};")
    out.append("")
    for t in order:
        out += _emit_enum(t) if isinstance(t, ir.Enum) else (
            _emit_union_type(t) if t.kind == "union" else _emit_struct_type(t, schema, boxed))
        out.append("")
    out += _emit_consts(schema)
    out += ["", "namespace detail {", ""]
    out += _emit_forward_decls(order)
    out += ["", "}  // namespace detail", "}  // namespace externspec", "",
            '#include "detail/container_codecs.h"', '#include "detail/codec.h"', "",
            "namespace externspec {", "namespace detail {", ""]
    for t in order:
        if isinstance(t, ir.Enum):
            out += _emit_enum_codec(t)
        elif t.kind == "union":
            out += _emit_union_codec(t)
        else:
            out += _emit_struct_codec(t)
    out += ["}  // namespace detail", "}  // namespace externspec", ""]
    out += _emit_version_policies(schema)
    out += ['#include "detail/api.h"', ""]
    out += _emit_codec_types(schema)
    out += ['#include "detail/separate_codec.h"', ""]
    return "\n".join(out)


def _emit_codec_types(schema: ir.Schema) -> list[str]:
    """`EXTERNSPEC_CODEC_TYPES(X)`: X(T) for every type `decode<T>` and `encode` accept (the enums,
    structs and unions), which separate compilation instantiates once
    (detail/separate_codec.h)."""
    out = ["// Every type decode<T> and encode() accept, for separate compilation of the codec.",
           "#define EXTERNSPEC_CODEC_TYPES(X) \\"]
    lines = [f"  X({t.name})" for t in schema.types]
    out += [f"{line} \\" for line in lines[:-1]] + lines[-1:]
    return [*out, ""]


# The C++ template of each version policy (detail/version.h), by ir.VERSION_POLICIES name.
_POLICY_TEMPLATES = {
    "externspec": "ExternspecVersioned<{name}>",
    "torch_export": "TorchExportVersioned<{name}, TORCH_EXPORT_SCHEMA_MAJOR>",
}


def _emit_version_policies(schema: ir.Schema) -> list[str]:
    """The version policy templates, and one `VersionPolicy<T>` per struct annotated with one."""
    versioned = [s for s in schema.structs if s.version_policy]
    if not versioned:
        return []
    out = ['#include "detail/version.h"', "", "namespace externspec {", "namespace detail {"]
    for s in versioned:
        base = _POLICY_TEMPLATES[s.version_policy or ""].format(name=s.name)
        out.append(f"template <> struct VersionPolicy<{s.name}> : {base} {{}};")
    return [*out, "}  // namespace detail", "}  // namespace externspec", ""]


def emit(schema: ir.Schema) -> dict[str, str]:
    """Every generated C++ header, by name relative to include/externspec/."""
    return {"externspec.h": emit_header(schema)}
