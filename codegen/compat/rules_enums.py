"""Rules over enum values, paired by number and by name. Enums are closed ints on the wire."""

from __future__ import annotations

from collections.abc import Iterator

from .. import ir
from ..reserved import reserved_or_empty
from .model import ALL, WIRE, Bump, Category
from .pairing import added_values, common_enums, deleted_values
from .registry import rule

Out = Iterator[tuple[ir.SourceLoc, str]]


def _v(e: ir.Enum, v: ir.EnumValue) -> str:
    return f'value {v.name} = {v.value} of enum "{e.name}"'


@rule("ENUM_VALUE_ADDED", "an enum value was added: old readers reject documents that use it",
      (Category.WIRE_JSON,), Bump.MINOR)
def enum_value_added(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_enums(old, new):
        for v in added_values(o, n):
            yield v.loc, f"{_v(n, v)} was added"


@rule("ENUM_VALUE_NO_DELETE", "an enum value was deleted: documents that use it no longer decode", ALL, Bump.MAJOR,
      remedy="keep the value and document it as deprecated")
def enum_value_no_delete(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_enums(old, new):
        for v in deleted_values(o, n):
            yield n.loc, f"{_v(o, v)} was deleted"


@rule("ENUM_VALUE_NO_DELETE_UNLESS_RESERVED", "a deleted enum value's number and name must be reserved", WIRE,
      Bump.FORBIDDEN, remedy='reserve what was deleted: add (reserved_ids = "N", reserved_names = "NAME") to the enum')
def enum_value_no_delete_unless_reserved(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_enums(old, new):
        res = reserved_or_empty(n)
        for v in deleted_values(o, n):
            missing = ([f"number {v.value}"] * (v.value not in res.ids)
                       + [f'name "{v.name}"'] * (v.name not in res.names))
            if missing:
                yield n.loc, f"{_v(o, v)} was deleted without reserving its {' and '.join(missing)}"


@rule("ENUM_VALUE_SAME_NAME", "an enum number changed its name (names may be read on the wire; the API breaks)",
      (Category.WIRE_JSON, Category.SOURCE), Bump.MAJOR, remedy="keep the old name")
def enum_value_same_name(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_enums(old, new):
        by_number = {v.value: v for v in o.values}
        for v in n.values:
            w = by_number.get(v.value)
            if w is not None and w.name != v.name:
                yield v.loc, f'value {v.value} of enum "{n.name}" changed name from {w.name} to {v.name}'


@rule("ENUM_VALUE_SAME_NUMBER", "an enum value changed its number: old documents change meaning", ALL,
      Bump.FORBIDDEN, remedy="restore the old number; add a new value if a new number is needed")
def enum_value_same_number(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_enums(old, new):
        by_name = {v.name: v for v in o.values}
        for v in n.values:
            w = by_name.get(v.name)
            if w is not None and w.value != v.value:
                yield v.loc, f'value {v.name} of enum "{n.name}" changed number from {w.value} to {v.value}'


@rule("ENUM_VALUE_RESERVED_REUSE", "an enum value uses a number or name the old revision reserved", ALL,
      Bump.FORBIDDEN, remedy="pick a number and a name that were never used")
def enum_value_reserved_reuse(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_enums(old, new):
        res = reserved_or_empty(o)
        for v in n.values:
            if v.value in res.ids:
                yield v.loc, f"{_v(n, v)} reuses number {v.value}, reserved in {o.loc.file} at line {o.loc.line}"
            if v.name in res.names:
                yield v.loc, f"{_v(n, v)} reuses name {v.name}, reserved in {o.loc.file} at line {o.loc.line}"
