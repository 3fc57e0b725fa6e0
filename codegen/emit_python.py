"""Python emitter: IR -> pydantic v2 models (python/externspec/_generated/).

A pure function of the IR: `emit(schema)` returns {file name: text}, byte-deterministic. The
wire rules themselves live in `externspec._modelbase`; this file only declares fields.
"""

from __future__ import annotations

import json
import re

from . import ir
from .naming import banner, definition_order

_BASE = {
    "bool": "bool",
    "byte": "I8",
    "i16": "I16",
    "i32": "I32",
    "i64": "I64",
    "double": "F64",
    "string": "str",
}


def _annotation(t: ir.TypeRef) -> str:
    if t.kind == "base":
        return _BASE[t.name]
    if t.kind == "named":
        return t.name
    if t.kind in ("list", "set"):
        return f"ListOf[{_annotation(t.args[0])}]"
    return f"MapOf[{_annotation(t.args[0])}, {_annotation(t.args[1])}]"


def _literal(schema: ir.Schema, t: ir.TypeRef, value: ir.ConstValue, construct: bool = False) -> str:
    """A Python expression for a constant of type `t`. With `construct`, struct literals are built
    with `model_construct` (no validator is built at import: the IDL's const was type-checked by
    the parser), which is how module-level constants are written."""
    if t.kind == "named":
        target = schema.type(t.name)
        if isinstance(target, ir.Enum):
            member = next(v.name for v in target.values if v.value == value)
            return f"{t.name}.{member}"
        assert isinstance(value, ir.ConstMap)
        args = ", ".join(
            f"{k}={_literal(schema, target.field(str(k)).type, v, construct)}"  # type: ignore[union-attr]
            for k, v in value.items
        )
        return f"{t.name}.model_construct({args})" if construct else f"{t.name}({args})"
    if t.kind in ("list", "set"):
        assert isinstance(value, tuple)
        return "[" + ", ".join(_literal(schema, t.args[0], v, construct) for v in value) + "]"
    if t.kind == "map":
        assert isinstance(value, ir.ConstMap)
        return "{" + ", ".join(
            f"{_literal(schema, t.args[0], k)}: {_literal(schema, t.args[1], v, construct)}" for k, v in value.items
        ) + "}"
    if t.name == "double":
        return repr(float(value))  # type: ignore[arg-type]
    return repr(value)


def _comment_lines(doc: str, indent: str) -> list[str]:
    return [f"{indent}# {line}".rstrip() for line in doc.splitlines()]


def _docstring(doc: str, indent: str) -> list[str]:
    if not doc:
        return []
    body = doc.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = body.splitlines()
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""', ""]
    return [f'{indent}"""{lines[0]}', *[f"{indent}{ln}".rstrip() for ln in lines[1:]], f'{indent}"""', ""]


def _field_line(schema: ir.Schema, s: ir.Struct, f: ir.Field) -> str:
    ann = _annotation(f.type)
    if s.kind == "union":
        return f"    {f.name}: Optional[{ann}] = Field(default=None, exclude_if=OMIT_IF_NONE)"
    if f.is_optional:
        if f.omit_if_null:
            return f"    {f.name}: Optional[{ann}] = Field(default=None, exclude_if=OMIT_IF_NONE)"
        return f"    {f.name}: Optional[{ann}] = None"
    if f.has_default:
        value = _literal(schema, f.type, f.default)
        if f.type.kind in ("list", "set", "map") or (
            f.type.kind == "named" and isinstance(schema.type(f.type.name), ir.Struct)
        ):
            return f"    {f.name}: {ann} = Field(default_factory=lambda: {value})"
        return f"    {f.name}: {ann} = {value}"
    return f"    {f.name}: {ann}"


def _thrift_type(t: ir.TypeRef) -> str:
    """The wire type of a field as a Python literal: a base or named type name, or a nested tuple
    ("list"|"set", elem) / ("map", key, value). Named types resolve in the generated module."""
    if t.kind in ("base", "named"):
        return f'"{t.name}"'
    args = ", ".join(_thrift_type(a) for a in t.args)
    return f'("{t.kind}", {args})'


def _thrift_fields(s: ir.Struct) -> list[str]:
    """`THRIFT_FIELDS`: (id, name, wire type) per field in declaration order, for the Thrift codecs."""
    if not s.fields:
        return ["    THRIFT_FIELDS: ClassVar[ThriftFields] = ()", ""]
    out = ["    THRIFT_FIELDS: ClassVar[ThriftFields] = ("]
    out += [f'        ({f.id}, "{f.name}", {_thrift_type(f.type)}),' for f in s.fields]
    return [*out, "    )", ""]


def _emit_enum(e: ir.Enum) -> list[str]:
    out = [f"class {e.name}(WireEnum):"]
    out += _docstring(e.doc, "    ")
    for v in e.values:
        out += _comment_lines(v.doc, "    ")
        out.append(f"    {v.name} = {v.value}")
    return out


def _emit_struct(schema: ir.Schema, s: ir.Struct) -> list[str]:
    base = "Union" if s.kind == "union" else "Struct"
    out = [f"class {s.name}({base}):"]
    out += _docstring(s.doc, "    ")
    if s.kind == "union":
        names = ", ".join(f'"{f.name}"' for f in s.fields)
        out.append(f"    MEMBERS: ClassVar[tuple[str, ...]] = ({names}{',' if len(s.fields) == 1 else ''})")
        out.append("")
    if s.version_policy:  # read by externspec.wire.version.policy_for
        out += [f'    VERSION_POLICY: ClassVar[str] = "{s.version_policy}"', ""]
    out += _thrift_fields(s)
    out += _field_docs(s)
    out += [_field_line(schema, s, f) for f in s.fields]
    if s.kind == "union" and s.fields:
        out += _union_typing(s)
    return out


def _union_typing(s: ir.Struct) -> list[str]:
    """What a type checker sees of a union, beyond its Optional fields (runtime: `_modelbase.Union`):
    `type` as a Literal of the member names, `value` as the union of the member types, and
    `unwrap(member)` overloaded per member to return that member's type, not Optional."""
    names = ", ".join(f'"{f.name}"' for f in s.fields)
    value_types = " | ".join(dict.fromkeys(_annotation(f.type) for f in s.fields))
    out = ["", "    if TYPE_CHECKING:", "        @property", f"        def type(self) -> Literal[{names}]: ...", "",
           "        @property", f"        def value(self) -> {value_types}: ...", ""]
    for f in s.fields:
        signature = f'def unwrap(self, member: Literal["{f.name}"]) -> {_annotation(f.type)}: ...'
        out += ["        @overload", f"        {signature}", ""]
    # Any other name: what the base class accepts (and raises UnionAccessError for at run time).
    out += ["        @overload", "        def unwrap(self, member: str) -> Any: ...", ""]
    return [*out, "        def unwrap(self, member: str) -> Any: ..."]


def _field_docs(s: ir.Struct) -> list[str]:
    """The IDL's field docs as data: `model_json_schema()` gives them as descriptions."""
    documented = [f for f in s.fields if f.doc]
    if not documented:
        return []
    entries = [f"        {json.dumps(f.name)}: {json.dumps(' '.join(f.doc.split()))}," for f in documented]
    return ["    FIELD_DOCS: ClassVar[dict[str, str]] = {", *entries, "    }", ""]


def _imports(schema: ir.Schema, body: str) -> list[str]:
    """The import block: only what the rendered body uses (computed before assembling the file)."""
    typing_names = [n for n in ("TYPE_CHECKING", "Any", "ClassVar", "Final", "Literal", "Optional")
                    if re.search(rf"\b{n}\b[\[: =]|-> {n}:|if {n}:", body)]
    typing_names += ["overload"] if "@overload" in body else []
    base_names = [n for n in ("F64", "I8", "I16", "I32", "I64", "OMIT_IF_NONE", "ListOf", "MapOf", "Struct",
                              "ThriftFields", "Union", "WireEnum") if re.search(rf"\b{n}\b", body)]
    lines = ["from __future__ import annotations", ""]
    if typing_names:
        lines.append(f"from typing import {', '.join(typing_names)}")
    if "Field(" in body:
        lines += ["", "from pydantic import Field"]
    if base_names:
        lines += ["", f"from externspec._modelbase import {', '.join(base_names)}"]
    return lines


def emit_models(schema: ir.Schema) -> str:
    order = definition_order(schema)
    body = [f'IDL_CHECKSUM: Final = "{schema.checksum}"']
    for t in order:
        body += ["", ""]
        body += _emit_enum(t) if isinstance(t, ir.Enum) else _emit_struct(schema, t)
    # No model_rebuild() calls: the base classes defer building each validator to its first use
    # (forward references resolve then), so importing the models costs no schema building.
    body.append("")
    for c in schema.consts:
        body += ["", *_comment_lines(c.doc, "")]
        body.append(f"{c.name}: Final = {_literal(schema, c.type, c.value, construct=True)}")
    names = [t.name for t in order] + [c.name for c in schema.consts] + ["IDL_CHECKSUM"]
    body += ["", "__all__ = ["] + [f'    "{n}",' for n in sorted(names)] + ["]", ""]
    doc = (schema.doc or "Generated models.").splitlines()
    doc[0] = f'"""{doc[0]}'
    doc[-1] += '"""'
    text = "\n".join(body)
    return "\n".join([*banner(schema, "#"), "", *doc, "", *_imports(schema, text), "", text])


def emit(schema: ir.Schema) -> dict[str, str]:
    """Every generated Python file, by name relative to the output directory."""
    init = "\n".join([
        *banner(schema, "#"),
        '"""Generated models; import them from `externspec`."""',
        "",
        "from .models import *  # noqa: F403",
        "from .models import __all__ as __all__",
        "",
    ])
    return {"__init__.py": init, "models.py": emit_models(schema)}
