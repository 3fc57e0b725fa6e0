"""C++ emitter: IR -> python/externspec/include/externspec/*.h.

A pure function of the IR: `emit(schema)` returns {file name: text}, byte-deterministic.

* `externspec.h` (generated from the IR): plain structs, `enum class`es with the schema's numbering
  and name tables, unions as a `std::variant` in declaration order with checked accessors, the
  constants, and `decode`/`encode` written against a backend-neutral `Value` concept. It includes
  the schema-independent `runtime.h` first and the default JSON backend last.
* `runtime.h`, `backend_nlohmann.h`, `backend_simdjson.h`: hand-written C++ kept in codegen/cpp/
  and emitted with the banner, so the shipped headers are one consistent set. The container codecs,
  the version policy and the public `decode`/`encode` (codegen/cpp/*.inc.h) are spliced into
  externspec.h where the generated declarations they need are visible.

Recursion: containers (std::vector, OrderedMap) hold incomplete types, so only values held by value
need ordering. A struct-typed field inside a recursive group is boxed (`Box<Graph>` in
GraphArgument), which breaks the cycle and keeps the union `Argument` small; the remaining by-value
uses are ordered topologically.
"""

from __future__ import annotations

from pathlib import Path

from . import ir
from .naming import banner, boxed_fields, definition_order, ident

_CPP_DIR = Path(__file__).with_name("cpp")
STATIC_FILES = ("runtime.h", "backend_nlohmann.h", "backend_simdjson.h")

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


def _key_switch(names: list[str], fn: str) -> list[str]:
    """A function from a JSON key to a member index (-1 if unknown): switch on length, then compare."""
    out = [f"inline int {fn}(std::string_view k) noexcept {{", "  switch (k.size()) {"]
    by_len: dict[int, list[tuple[int, str]]] = {}
    for i, n in enumerate(names):
        by_len.setdefault(len(n.encode("utf-8")), []).append((i, n))
    for length in sorted(by_len):
        out.append(f"    case {length}:")
        for i, n in by_len[length]:
            out.append(f"      if (k == {_string_literal(n)}) return {i};")
        out.append("      return -1;")
    out += ["    default:", "      return -1;", "  }", "}"]
    return out


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


def _decode_field(s: ir.Struct, f: ir.Field, i: int, boxed: frozenset[tuple[str, str]]) -> list[str]:
    target = f"out.{ident(f.name)}"
    if (s.name, f.name) in boxed and not f.is_optional:
        target = f"*out.{ident(f.name)}"
    part = f'c.part(".{f.name}", [&] {{ decode_value(slot[{i}], {target}, ctx); }});'
    if f.is_optional or f.has_default:
        return [f"  if (seen[{i}]) {part}"]
    return [
        f"  if (!seen[{i}]) c.here(IssueKind::Missing, \"missing required field `{f.name}`\");",
        f"  else {part}",
    ]


def _emit_struct_codec(s: ir.Struct, boxed: frozenset[tuple[str, str]]) -> list[str]:
    n = len(s.fields)
    fn = f"field_index_{s.name}"
    out = _key_switch([f.name for f in s.fields], fn)
    out += [
        "template <class V>",
        f"void decode_value(const V& v, {s.name}& out, const Ctx& ctx) {{",
        "  if (v.kind() != JsonKind::Object) fail_type(\"object\", v.kind());",
        f"  V slot[{max(n, 1)}];",
        f"  bool seen[{max(n, 1)}] = {{}};",
        "  UnknownKeys unknown(ctx);",
        "  v.for_each_member([&](std::string_view key, const V& m) {",
        f"    int i = {fn}(key);",
        "    if (i >= 0) {",
        "      slot[i] = m;",
        "      seen[i] = true;",
        "    } else if (ctx.forbid_unknown) {",
        "      unknown.add(key);",
        "    }",
        "  });",
        "  Collector c(ctx);",
    ]
    for i, f in enumerate(s.fields):
        out += _decode_field(s, f, i, boxed)
    out += ["  unknown.report(c);", "  c.finish();", "}", ""]

    out += [f"inline void encode_value(std::string& out, const {s.name}& v) {{"]
    omittable = [f for f in s.fields if f.is_optional and f.omit_if_null]
    if omittable:
        out.append("  bool first = true;")
        out.append("  out += '{';")
        for f in s.fields:
            key = _string_literal(f'"{f.name}":')
            m = ident(f.name)
            write = [
                "  if (!first) out += ',';",
                "  first = false;",
                f"  out += {key};",
            ]
            if f in omittable:
                out.append(f"  if (v.{m}) {{")
                out += ["  " + w for w in write]
                out.append(f"    encode_value(out, *v.{m});")
                out.append("  }")
            else:
                out += write
                out.append(f"  encode_value(out, v.{m});")
        out.append("  out += '}';")
    else:
        for k, f in enumerate(s.fields):
            prefix = "{" if k == 0 else ","
            out.append(f"  out += {_string_literal(prefix + chr(34) + f.name + chr(34) + ':')};")
            out.append(f"  encode_value(out, v.{ident(f.name)});")
        out.append('  out += "}";' if s.fields else '  out += "{}";')
    out += ["}", ""]
    return out


def _emit_union_codec(u: ir.Struct) -> list[str]:
    n = len(u.fields)
    fn = f"member_index_{u.name}"
    out = _key_switch([f.name for f in u.fields], fn)
    out += [
        "template <class V>",
        f"void decode_value(const V& v, {u.name}& out, const Ctx& ctx) {{",
        "  if (v.kind() != JsonKind::Object) fail_type(\"object\", v.kind());",
        f"  V slot[{n}];",
        f"  bool seen[{n}] = {{}};",
        "  UnknownKeys unknown(ctx);",
        "  v.for_each_member([&](std::string_view key, const V& m) {",
        f"    int i = {fn}(key);",
        "    if (i >= 0) {",
        "      slot[i] = m;",
        "      seen[i] = true;",
        "    } else {",
        "      unknown.add(key);",
        "    }",
        "  });",
        "  Collector c(ctx);",
        f"  static constexpr std::string_view segments[{n}] = {{"
        + ", ".join(_string_literal("." + f.name) for f in u.fields) + "};",
        "  int count = 0, last = -1;",
        "  bool null_member = false;",
        f"  for (int i = 0; i < {n}; ++i) {{",
        "    if (!seen[i]) continue;",
        "    ++count;",
        "    last = i;",
        "    if (slot[i].kind() == JsonKind::Null) {",
        "      null_member = true;",
        "      continue;",
        "    }",
        "    c.part(segments[i], [&] {",
        "      switch (i) {",
    ]
    for i in range(len(u.fields)):
        out.append(f"        case {i}: decode_value(slot[{i}], out.variant().template emplace<{i}>(), ctx); break;")
    out += [
        "        default: break;",
        "      }",
        "    });",
        "  }",
        "  unknown.report(c);",
        "  if (c.ok()) {",
        "    if (count != 1) {",
        "      std::vector<std::string_view> names;",
        f"      for (int i = 0; i < {n}; ++i)",
        f"        if (seen[i]) names.push_back({u.name}::member_names[static_cast<std::size_t>(i)]);",
        f'      c.here(IssueKind::Union, union_arity_message("{u.name}", names));',
        "    } else if (null_member) {",
        f'      c.here(IssueKind::Union, std::string("member `") + std::string({u.name}::member_names['
        f'static_cast<std::size_t>(last)]) + "` of `{u.name}` is null");',
        "    }",
        "  }",
        "  c.finish();",
        "}",
        "",
        f"inline void encode_value(std::string& out, const {u.name}& v) {{",
        "  switch (v.variant().index()) {",
    ]
    for i, f in enumerate(u.fields):
        out.append(f"    case {i}:")
        out.append(f"      out += {_string_literal('{' + chr(34) + f.name + chr(34) + ':')};")
        out.append(f"      encode_value(out, std::get<{i}>(v.variant()));")
        out.append("      break;")
    out += ["    default:", "      break;", "  }", "  out += '}';", "}", ""]
    return out


def _emit_enum_codec(e: ir.Enum) -> list[str]:
    values = [v.value for v in e.values]
    allowed = ", ".join(str(v) for v in values[:-1]) + (f" or {values[-1]}" if len(values) > 1 else str(values[0]))
    out = [
        "template <class V>",
        f"void decode_value(const V& v, {e.name}& out, const Ctx&) {{",
        f'  static constexpr const char* allowed = "{allowed}";',
        "  std::int64_t n = decode_enum_number(v, allowed);",
        "  switch (n) {",
    ]
    out += [f"    case {x}:" for x in sorted(set(values))]
    out += [
        f"      out = static_cast<{e.name}>(n);",
        "      return;",
        "    default:",
        '      fail(IssueKind::Enum, "invalid enum value " + std::to_string(n) + ": input should be " + allowed);',
        "  }",
        "}",
        f"inline void encode_value(std::string& out, {e.name} v) {{ write_int(out, static_cast<std::int64_t>(v)); }}",
        "",
    ]
    return out


def _emit_forward_decls(order: tuple[ir.TypeDef, ...]) -> list[str]:
    out = []
    for t in order:
        if isinstance(t, ir.Enum):
            out.append(f"template <class V> void decode_value(const V& v, {t.name}& out, const Ctx& ctx);")
            out.append(f"inline void encode_value(std::string& out, {t.name} v);")
        else:
            out.append(f"template <class V> void decode_value(const V& v, {t.name}& out, const Ctx& ctx);")
            out.append(f"inline void encode_value(std::string& out, const {t.name}& v);")
    return out


def _emit_consts(schema: ir.Schema) -> list[str]:
    out = [f"inline constexpr std::string_view IDL_CHECKSUM = {_string_literal(schema.checksum)};"]
    for c in schema.consts:
        out += ["", *_comment(c.doc, "")]
        value = _literal(schema, c.type, c.value)
        if c.type.kind == "base" and c.type.name not in ("string", "binary"):
            out.append(f"inline constexpr {cpp_type(c.type)} {c.name} = {value};")
        elif c.type.kind == "base":
            out.append(f"inline constexpr std::string_view {c.name} = {value};")
        else:
            out.append(f"inline const {cpp_type(c.type)} {c.name} = {value};")
    return out


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
        "#pragma once",
        "",
        "#include <array>",
        "",
        '#include "runtime.h"',
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
    out += ["", *_spliced("containers.inc.h"), ""]
    for t in order:
        if isinstance(t, ir.Enum):
            out += _emit_enum_codec(t)
        elif t.kind == "union":
            out += _emit_union_codec(t)
        else:
            out += _emit_struct_codec(t, boxed)
    out += ["}  // namespace detail", "}  // namespace externspec", ""]
    out += _emit_version_policies(schema)
    out += [*_spliced("api.inc.h"), "", "#ifndef EXTERNSPEC_NO_DEFAULT_BACKEND", '#include "backend_nlohmann.h"',
            "#endif", ""]
    return "\n".join(out)


# The C++ template of each version policy (codegen/cpp/version.inc.h), by ir.VERSION_POLICIES name.
_POLICY_TEMPLATES = {
    "externspec": "ExternspecVersioned<{name}>",
    "torch_export": "TorchExportVersioned<{name}, TORCH_EXPORT_SCHEMA_MAJOR>",
}


def _emit_version_policies(schema: ir.Schema) -> list[str]:
    """The version policy templates, and one `VersionPolicy<T>` per struct annotated with one."""
    versioned = [s for s in schema.structs if s.version_policy]
    if not versioned:
        return []
    out = _spliced("version.inc.h")
    out += ["", "namespace externspec {", "namespace detail {"]
    for s in versioned:
        base = _POLICY_TEMPLATES[s.version_policy or ""].format(name=s.name)
        out.append(f"template <> struct VersionPolicy<{s.name}> : {base} {{}};")
    return [*out, "}  // namespace detail", "}  // namespace externspec", ""]


def _spliced(name: str) -> list[str]:
    """Hand-written C++ (codegen/cpp/) pasted into the generated header at this point."""
    return (_CPP_DIR / name).read_text(encoding="utf-8").rstrip("\n").splitlines()


def _static(schema: ir.Schema, name: str) -> str:
    text = (_CPP_DIR / name).read_text(encoding="utf-8")
    return "\n".join([*banner(schema, "//"), text])


def emit(schema: ir.Schema) -> dict[str, str]:
    """Every generated C++ header, by name relative to include/externspec/."""
    files = {"externspec.h": emit_header(schema)}
    for name in STATIC_FILES:
        files[name] = _static(schema, name)
    return files
