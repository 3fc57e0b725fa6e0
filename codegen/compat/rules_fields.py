"""Rules over struct fields and union members, paired by id and by name."""

from __future__ import annotations

from collections.abc import Iterator

from .. import ir
from ..reserved import reserved_or_empty
from .model import ALL, WIRE, Bump, Category
from .pairing import added_fields, common_structs, deleted_fields, describe, paired_fields, show_value
from .registry import rule
from .typecompare import TypeChange, compare

Out = Iterator[tuple[ir.SourceLoc, str]]

NEW_FIELD = "add a new field with a new id and name, and keep (or delete and reserve) the old one"


def _has_default(f: ir.Field) -> bool:
    return f.is_optional or f.has_default


@rule("FIELD_ADDED_OPTIONAL", "an optional or defaulted struct field was added", (Category.WIRE_JSON,), Bump.MINOR)
def field_added_optional(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_structs(old, new):
        for f in added_fields(o, n):
            if n.kind == "struct" and _has_default(f):
                how = "optional" if f.is_optional else "with a default"
                yield f.loc, f"{describe(n, f)} was added ({how})"


@rule("FIELD_ADDED_REQUIRED", "a struct field without a default was added: old documents lack it", ALL, Bump.MAJOR,
      remedy="make the new field optional or give it a default")
def field_added_required(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_structs(old, new):
        for f in added_fields(o, n):
            if n.kind == "struct" and not _has_default(f):
                yield f.loc, f"{describe(n, f)} was added without a default; documents written before lack it"


@rule("UNION_MEMBER_ADDED", "a union member was added: old readers reject documents that use it",
      (Category.WIRE_JSON,), Bump.MINOR)
def union_member_added(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_structs(old, new):
        if n.kind == "union":
            for f in added_fields(o, n):
                yield f.loc, f"{describe(n, f)} was added"


@rule("FIELD_NO_DELETE", "a plain or required struct field was deleted: old readers require it", ALL,
      Bump.MAJOR, remedy="keep the field and document it as deprecated")
def field_no_delete(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_structs(old, new):
        if n.kind == "struct":
            for f in deleted_fields(o, n):
                if not _has_default(f):
                    yield n.loc, f"{describe(o, f)} was deleted; old readers require it"


@rule("FIELD_NO_DELETE_OPTIONAL",
      "an optional or defaulted struct field was deleted: old readers fall back to its default",
      (Category.SOURCE,), Bump.MINOR)
def field_no_delete_optional(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_structs(old, new):
        if n.kind == "struct":
            for f in deleted_fields(o, n):
                if _has_default(f):
                    yield n.loc, f"{describe(o, f)} was deleted; old readers fall back to its default"


@rule("UNION_MEMBER_NO_DELETE", "a union member was deleted: documents that use it no longer decode", ALL,
      Bump.MAJOR, remedy="keep the member and document it as deprecated")
def union_member_no_delete(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_structs(old, new):
        if n.kind == "union":
            for f in deleted_fields(o, n):
                yield n.loc, f"{describe(o, f)} was deleted"


@rule("FIELD_NO_DELETE_UNLESS_RESERVED", "a deleted field's id and name must be reserved so they are never reused",
      WIRE, Bump.FORBIDDEN,
      remedy='reserve what was deleted: add (reserved_ids = "ID", reserved_names = "NAME") to the type')
def field_no_delete_unless_reserved(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_structs(old, new):
        res = reserved_or_empty(n)
        for f in deleted_fields(o, n):
            missing = [f"id {f.id}"] * (f.id not in res.ids) + [f'name "{f.name}"'] * (f.name not in res.names)
            if missing:
                yield n.loc, (f"{describe(o, f)} was deleted without reserving its {' and '.join(missing)} "
                              f"(reserved_ids / reserved_names on {n.kind} \"{n.name}\")")


@rule("FIELD_SAME_NAME", "a field kept its id but changed its name (the JSON key)",
      (Category.WIRE_JSON, Category.SOURCE), Bump.MAJOR, remedy=NEW_FIELD)
def field_same_name(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_structs(old, new):
        by_id = {f.id: f for f in o.fields}
        for f in n.fields:
            g = by_id.get(f.id)
            if g is not None and g.name != f.name:
                yield f.loc, f'{describe(n, f)} changed name from "{g.name}" to "{f.name}"'


@rule("FIELD_SAME_ID", "a field kept its name but changed its id", (Category.WIRE_BINARY,), Bump.FORBIDDEN,
      remedy="restore the field's old id")
def field_same_id(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_structs(old, new):
        by_name = {f.name: f for f in o.fields}
        for f in n.fields:
            g = by_name.get(f.name)
            if g is not None and g.id != f.id:
                yield f.loc, f'{describe(n, f)} changed id from {g.id} to {f.id}'


def _type_findings(old: ir.Schema, new: ir.Schema, kind: TypeChange, what: str) -> Out:
    for o, n in common_structs(old, new):
        for g, f in paired_fields(o, n):
            if compare(old, g.type, new, f.type) == kind:
                yield f.loc, f"{describe(n, f)} changed type from {g.type} to {f.type} ({what})"


@rule("FIELD_SAME_TYPE", "a field's type changed incompatibly (also inside list/map element types)", ALL,
      Bump.FORBIDDEN, remedy=NEW_FIELD)
def field_same_type(old: ir.Schema, new: ir.Schema) -> Out:
    yield from _type_findings(old, new, TypeChange.INCOMPATIBLE, "incompatible")


@rule("FIELD_INTEGER_WIDENED", "an integer field was widened: old readers and binary readers break", WIRE,
      Bump.MAJOR, remedy=NEW_FIELD)
def field_integer_widened(old: ir.Schema, new: ir.Schema) -> Out:
    yield from _type_findings(old, new, TypeChange.WIDENED, "widened: old readers may not fit the values")


@rule("FIELD_LIST_SET_SWAPPED", "a field changed between list and set", (Category.WIRE_BINARY, Category.SOURCE),
      Bump.MAJOR, remedy=NEW_FIELD)
def field_list_set_swapped(old: ir.Schema, new: ir.Schema) -> Out:
    yield from _type_findings(old, new, TypeChange.LIST_SET, "list <-> set: the binary type and semantics differ")


@rule("FIELD_ENUM_INT_SWAPPED", "a field changed between i32 and an enum (the same ints on the wire)",
      (Category.SOURCE,), Bump.MINOR)
def field_enum_int_swapped(old: ir.Schema, new: ir.Schema) -> Out:
    yield from _type_findings(old, new, TypeChange.ENUM_INT, "i32 <-> enum: ints on the wire, an API change")


@rule("FIELD_SAME_REQUIREDNESS", "a field changed between optional and plain/required", ALL, Bump.MAJOR,
      remedy=NEW_FIELD)
def field_same_requiredness(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_structs(old, new):
        for g, f in paired_fields(o, n):
            if g.is_optional != f.is_optional:
                why = ("old documents may carry null or omit it" if g.is_optional
                       else "new documents may carry null, which old readers reject")
                yield f.loc, f"{describe(n, f)} changed from {g.requiredness} to {f.requiredness}: {why}"


@rule("FIELD_DEFAULT_ADDED", "a field gained a default", (Category.WIRE_JSON,), Bump.MINOR)
def field_default_added(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_structs(old, new):
        for g, f in paired_fields(o, n):
            if f.has_default and not g.has_default:
                yield f.loc, f"{describe(n, f)} gained the default {show_value(f.default)}"


@rule("FIELD_DEFAULT_REMOVED", "a field lost its default: documents that omit it no longer decode", ALL,
      Bump.MAJOR, remedy="keep the default")
def field_default_removed(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_structs(old, new):
        for g, f in paired_fields(o, n):
            if g.has_default and not f.has_default:
                yield f.loc, f"{describe(n, f)} lost its default {show_value(g.default)}"


@rule("FIELD_SAME_DEFAULT", "a field's default changed: old and new readers disagree on a missing key", ALL,
      Bump.MAJOR, remedy="keep the old default")
def field_same_default(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_structs(old, new):
        for g, f in paired_fields(o, n):
            if g.has_default and f.has_default and g.default != f.default:
                yield f.loc, (f"{describe(n, f)} changed its default from {show_value(g.default)} "
                              f"to {show_value(f.default)}")


@rule("FIELD_RESERVED_REUSE", "a field uses an id or name the old revision reserved", ALL, Bump.FORBIDDEN,
      remedy="pick an id and a name that were never used")
def field_reserved_reuse(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_structs(old, new):
        res = reserved_or_empty(o)
        for f in n.fields:
            if f.id in res.ids:
                yield f.loc, f'{describe(n, f)} reuses id {f.id}, reserved in {o.loc.file} at line {o.loc.line}'
            if f.name in res.names:
                yield f.loc, f'{describe(n, f)} reuses name "{f.name}", reserved in {o.loc.file} at line {o.loc.line}'


@rule("RESERVED_NO_DELETE", "a reserved id or name was un-reserved", WIRE, Bump.FORBIDDEN,
      remedy="restore the reserved_ids / reserved_names annotation")
def reserved_no_delete(old: ir.Schema, new: ir.Schema) -> Out:
    from .pairing import common_types

    for o, n in common_types(old, new):
        was, now = reserved_or_empty(o), reserved_or_empty(n)
        for id_ in sorted(was.ids - now.ids):
            yield n.loc, f'{o.kind} "{n.name}" no longer reserves id {id_}'
        for name in sorted(was.names - now.names):
            yield n.loc, f'{o.kind} "{n.name}" no longer reserves name "{name}"'
