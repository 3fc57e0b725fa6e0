"""Pairing of old and new elements by identity (field id and name, enum number and name), never
by position. Shared by the rules so that each stays a few lines."""

from __future__ import annotations

from collections.abc import Iterator

from .. import ir


def common_types(old: ir.Schema, new: ir.Schema) -> Iterator[tuple[ir.TypeDef, ir.TypeDef]]:
    """Types present (by name) in both revisions, in the new file's order."""
    for t in new.types:
        o = old.get(t.name)
        if o is not None:
            yield o, t


def common_structs(old: ir.Schema, new: ir.Schema) -> Iterator[tuple[ir.Struct, ir.Struct]]:
    """Structs or unions present in both with the same kind (a kind change is its own finding)."""
    for o, n in common_types(old, new):
        if isinstance(o, ir.Struct) and isinstance(n, ir.Struct) and o.kind == n.kind:
            yield o, n


def common_enums(old: ir.Schema, new: ir.Schema) -> Iterator[tuple[ir.Enum, ir.Enum]]:
    for o, n in common_types(old, new):
        if isinstance(o, ir.Enum) and isinstance(n, ir.Enum):
            yield o, n


def paired_fields(o: ir.Struct, n: ir.Struct) -> Iterator[tuple[ir.Field, ir.Field]]:
    """(old, new) field pairs: same id, or else the same name when that id is not taken."""
    new_by_id = {f.id: f for f in n.fields}
    new_by_name = {f.name: f for f in n.fields}
    old_ids = {f.id for f in o.fields}
    for f in o.fields:
        if f.id in new_by_id:
            yield f, new_by_id[f.id]
        elif f.name in new_by_name and new_by_name[f.name].id not in old_ids:
            yield f, new_by_name[f.name]


def deleted_fields(o: ir.Struct, n: ir.Struct) -> Iterator[ir.Field]:
    """Old fields whose id and name are both gone."""
    ids, names = {f.id for f in n.fields}, {f.name for f in n.fields}
    return (f for f in o.fields if f.id not in ids and f.name not in names)


def added_fields(o: ir.Struct, n: ir.Struct) -> Iterator[ir.Field]:
    """New fields whose id and name are both new."""
    ids, names = {f.id for f in o.fields}, {f.name for f in o.fields}
    return (f for f in n.fields if f.id not in ids and f.name not in names)


def deleted_values(o: ir.Enum, n: ir.Enum) -> Iterator[ir.EnumValue]:
    numbers, names = {v.value for v in n.values}, {v.name for v in n.values}
    return (v for v in o.values if v.value not in numbers and v.name not in names)


def added_values(o: ir.Enum, n: ir.Enum) -> Iterator[ir.EnumValue]:
    numbers, names = {v.value for v in o.values}, {v.name for v in o.values}
    return (v for v in n.values if v.value not in numbers and v.name not in names)


def show_value(v: ir.ConstValue) -> str:
    """A constant as IDL-like text: strings quoted, maps as {k: v}, lists as [a, b]."""
    if isinstance(v, ir.ConstMap):
        return "{" + ", ".join(f"{show_value(k)}: {show_value(x)}" for k, x in v.items) + "}"
    if isinstance(v, tuple):
        return "[" + ", ".join(show_value(x) for x in v) + "]"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v)


def field_word(s: ir.Struct) -> str:
    return "member" if s.kind == "union" else "field"


def describe(s: ir.Struct, f: ir.Field) -> str:
    """`field 20 ("index") on struct "Device"`, the way every field finding names its subject."""
    return f'{field_word(s)} {f.id} ("{f.name}") on {s.kind} "{s.name}"'
