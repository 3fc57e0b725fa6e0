"""Checks that thriftpy2 accepts but externspec's wire format or emitters cannot honour.

Each rule is a small function from the IR (and the IDL text, for what the IR cannot hold) to
(location, message) findings; `lint` runs them all and raises one `SchemaError` listing every
problem, not only the first.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Iterator

from . import ir
from .errors import SchemaError
from .naming import CPP_KEYWORDS, CPP_UNION_METHODS, value_cycle
from .reserved import reserved

Finding = tuple[ir.SourceLoc, str]

MAX_FIELD_ID = 32767

# Union members become attributes next to the union API (`.type`, `.value`, `.unwrap`); torch's `_Union`
# reserves the same names plus `create`.
RESERVED_UNION_MEMBERS = frozenset({"type", "value", "unwrap", "create"})

# Attributes of pydantic's BaseModel that a field must not shadow.
RESERVED_FIELD_NAMES = frozenset({
    "construct", "copy", "dict", "json", "schema", "schema_json", "validate", "fields",
    "from_orm", "parse_obj", "parse_raw", "parse_file", "update_forward_refs",
})


KNOWN_ANNOTATIONS = {
    "field": frozenset({ir.OMIT_IF_NULL}),
    "type": frozenset({"reserved_ids", "reserved_names", ir.VERSION_POLICY}),
    "const": frozenset({ir.MEMBERS_OF}),
}

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _fields(schema: ir.Schema) -> Iterator[tuple[ir.Struct, ir.Field]]:
    for s in schema.structs:
        for f in s.fields:
            yield s, f


def check_field_ids(schema: ir.Schema, text: str) -> Iterator[Finding]:
    for s, f in _fields(schema):
        if f.id < 1:
            yield f.loc, f'field "{f.name}" of {s.kind} "{s.name}" needs an explicit id in 1..{MAX_FIELD_ID}'
        elif f.id > MAX_FIELD_ID:
            yield f.loc, f'field id {f.id} of "{s.name}.{f.name}" is out of range 1..{MAX_FIELD_ID}'


def check_enum_values(schema: ir.Schema, text: str) -> Iterator[Finding]:
    for e in schema.enums:
        seen: dict[int, str] = {}
        for v in e.values:
            if v.value in seen:
                yield v.loc, (f'duplicate enum value {v.value} in enum "{e.name}": '
                              f'"{v.name}" and "{seen[v.value]}"')
            else:
                seen[v.value] = v.name
            if v.value < 0 or v.value > 2**31 - 1:
                yield v.loc, f'enum value {v.name} = {v.value} in "{e.name}" is out of range 0..2147483647'


def check_union_members(schema: ir.Schema, text: str) -> Iterator[Finding]:
    for s in schema.structs:
        if s.kind != "union":
            continue
        if not s.fields:
            yield s.loc, f'union "{s.name}" has no members'
        for f in s.fields:
            if f.requiredness != "default":
                yield f.loc, f'union member "{s.name}.{f.name}" may not be {f.requiredness}'
            if f.has_default:
                yield f.loc, f'union member "{s.name}.{f.name}" may not have a default'
            if f.name in RESERVED_UNION_MEMBERS or f.name in CPP_UNION_METHODS:
                yield f.loc, f'union member name "{f.name}" in "{s.name}" is reserved'


def check_types(schema: ir.Schema, text: str) -> Iterator[Finding]:
    def walk(t: ir.TypeRef) -> Iterator[str]:
        if t.kind == "map":
            key = t.args[0]
            if not (key.kind == "base" and key.name == "string"):
                yield f"map key type {key} is not string (JSON object keys are strings)"
        if t.kind == "base" and t.name == "binary":
            yield "binary is not supported by the JSON wire format"
        for a in t.args:
            yield from walk(a)

    for s, f in _fields(schema):
        for problem in walk(f.type):
            yield f.loc, f'field "{s.name}.{f.name}": {problem}'


def check_names(schema: ir.Schema, text: str) -> Iterator[Finding]:
    for s, f in _fields(schema):
        if f.name.startswith("_") or not _IDENT.match(f.name):
            yield f.loc, f'field name "{f.name}" in "{s.name}" must start with a letter'
        elif f.name in RESERVED_FIELD_NAMES or f.name.startswith("model_"):
            yield f.loc, f'field name "{f.name}" in "{s.name}" is reserved by the Python models'
        elif f.name in CPP_KEYWORDS or keyword.iskeyword(f.name):
            yield f.loc, f'field name "{f.name}" in "{s.name}" is a reserved word'
    for t in schema.types:
        if t.name in CPP_KEYWORDS or keyword.iskeyword(t.name):
            yield t.loc, f'type name "{t.name}" is a reserved word'
        if isinstance(t, ir.Enum):
            for v in t.values:
                if v.name in CPP_KEYWORDS or keyword.iskeyword(v.name):
                    yield v.loc, f'enum value name "{v.name}" in "{t.name}" is a reserved word'


_TYPE_DECL = re.compile(r"^\s*(struct|union|enum|exception|typedef)\s+(?:.*\s)?([A-Za-z_]\w*)\s*(?:\{|\(|$)", re.M)


def check_duplicate_types(schema: ir.Schema, text: str) -> Iterator[Finding]:
    """thriftpy2 lets a later struct, union or enum of the same name silently replace an earlier one."""
    seen: dict[str, int] = {}
    for m in _TYPE_DECL.finditer(text):
        name = m.group(2)
        line = text.count("\n", 0, m.start(2)) + 1
        if m.group(1) == "typedef":
            continue
        if name in seen:
            col = m.start(2) - text.rfind("\n", 0, m.start(2))
            yield ir.SourceLoc(schema.path, line, col), (
                f'type "{name}" is declared twice (first at line {seen[name]})')
        else:
            seen[name] = line


def check_annotations(schema: ir.Schema, text: str) -> Iterator[Finding]:
    for s, f in _fields(schema):
        for key, _ in f.annotations:
            if key not in KNOWN_ANNOTATIONS["field"]:
                yield f.loc, f'unknown annotation "{key}" on field "{s.name}.{f.name}"'
        if f.omit_if_null and not f.is_optional:
            yield f.loc, f'{ir.OMIT_IF_NULL} needs an optional field ("{s.name}.{f.name}")'
    for t in schema.types:
        for key, _ in t.annotations:
            if key not in KNOWN_ANNOTATIONS["type"]:
                yield t.loc, f'unknown annotation "{key}" on "{t.name}"'
    for c in schema.consts:
        for key, _ in c.annotations:
            if key not in KNOWN_ANNOTATIONS["const"]:
                yield c.loc, f'unknown annotation "{key}" on const "{c.name}"'


def check_members_of(schema: ir.Schema, text: str) -> Iterator[Finding]:
    """A const annotated `members_of = "U"` names only members of union U."""
    for c in schema.consts:
        union_name = c.members_of
        if union_name is None:
            continue
        union = schema.get(union_name)
        if not isinstance(union, ir.Struct) or union.kind != "union":
            yield c.loc, f'{ir.MEMBERS_OF} "{union_name}" on const "{c.name}" is not a union'
            continue
        for name in dict.fromkeys(c.strings()):
            if union.field(name) is None:
                yield c.loc, f'const "{c.name}" names "{name}", which is not a member of union "{union_name}"'


def check_version_policy(schema: ir.Schema, text: str) -> Iterator[Finding]:
    """A versioned document is a struct whose `schema_version: SchemaVersion` the policy reads:
    optional for externspec's own version (torch writes none), required for torch's."""
    for t in schema.types:
        policy = dict(t.annotations).get(ir.VERSION_POLICY)
        if policy is None:
            continue
        if not isinstance(t, ir.Struct) or t.kind != "struct":
            yield t.loc, f'{ir.VERSION_POLICY} applies to structs, not to "{t.name}"'
            continue
        if policy not in ir.VERSION_POLICIES:
            yield t.loc, (f'{ir.VERSION_POLICY} "{policy}" on "{t.name}" is not one of '
                          f'{", ".join(ir.VERSION_POLICIES)}')
            continue
        f = t.field("schema_version")
        optional = policy == "externspec"
        if f is None or f.type != ir.TypeRef.named("SchemaVersion") or f.is_optional != optional:
            yield t.loc, (f'{ir.VERSION_POLICY} "{policy}" on "{t.name}" needs a field '
                          f'"{"optional " if optional else ""}SchemaVersion schema_version"')
        if policy == "torch_export" and schema.const("TORCH_EXPORT_SCHEMA_MAJOR") is None:
            yield t.loc, f'{ir.VERSION_POLICY} "torch_export" on "{t.name}" needs const i64 TORCH_EXPORT_SCHEMA_MAJOR'


def check_value_cycles(schema: ir.Schema, text: str) -> Iterator[Finding]:
    """Types that hold each other by value (through unions: a struct field would be boxed) have no
    C++ definition."""
    chain = value_cycle(schema)
    if chain is not None:
        yield schema.type(chain[0]).loc, (f'types {" -> ".join(chain)} hold each other by value; a struct '
                                          f"field must break the cycle")


def check_namespace(schema: ir.Schema, text: str) -> Iterator[Finding]:
    namespace = dict(schema.namespaces).get("cpp", "externspec")
    if namespace != "externspec":
        line = next((i for i, s in enumerate(text.splitlines(), 1) if s.startswith("namespace cpp ")), 1)
        yield ir.SourceLoc(schema.path, line), (
            f'the C++ runtime lives in namespace externspec; the IDL asks for "{namespace}"')


def check_reserved(schema: ir.Schema, text: str) -> Iterator[Finding]:
    """A type may not declare a field (or enum value) whose id or name it reserves."""
    for t in schema.types:
        try:
            res = reserved(t)
        except ValueError as e:
            yield t.loc, f'bad reserved_ids/reserved_names annotation on "{t.name}": {e}'
            continue
        what = "enum value" if isinstance(t, ir.Enum) else ("member" if t.kind == "union" else "field")
        items = ([(v.value, v.name, v.loc) for v in t.values] if isinstance(t, ir.Enum)
                 else [(f.id, f.name, f.loc) for f in t.fields])
        for id_, name, loc in items:
            if id_ in res.ids:
                yield loc, f'{what} "{t.name}.{name}" uses {id_}, which "{t.name}" reserves'
            if name in res.names:
                yield loc, f'{what} name "{t.name}.{name}" is reserved by "{t.name}"'


def check_schema_version(schema: ir.Schema, text: str) -> Iterator[Finding]:
    c = schema.const("SCHEMA_VERSION")
    if c is None:
        yield ir.SourceLoc(schema.path, 1), "missing const SchemaVersion SCHEMA_VERSION"
    elif schema.schema_version() is None:
        yield c.loc, "SCHEMA_VERSION must be a SchemaVersion literal with integer major and minor"


RULES: tuple[Callable[[ir.Schema, str], Iterator[Finding]], ...] = (
    check_field_ids,
    check_enum_values,
    check_union_members,
    check_types,
    check_names,
    check_duplicate_types,
    check_annotations,
    check_version_policy,
    check_members_of,
    check_value_cycles,
    check_namespace,
    check_reserved,
)


def lint(schema: ir.Schema, text: str, *, require_version: bool = True) -> None:
    """Raise `SchemaError` listing every problem found, or return None."""
    rules = RULES + ((check_schema_version,) if require_version else ())
    problems = [finding for rule in rules for finding in rule(schema, text)]
    if problems:
        raise SchemaError(problems)
