"""Rules over whole types: added, deleted, renamed, kind changed."""

from __future__ import annotations

from collections.abc import Iterator

from .. import ir
from .model import ALL, Bump, Category
from .pairing import common_types
from .registry import rule
from .typecompare import same_shape

Out = Iterator[tuple[ir.SourceLoc, str]]


def _kind(t: ir.TypeDef) -> str:
    return t.kind


def renamed_types(old: ir.Schema, new: ir.Schema) -> list[tuple[ir.TypeDef, ir.TypeDef]]:
    """(old, new) pairs where a deleted type and an added type have the same shape: a rename."""
    added = [t for t in new.types if old.get(t.name) is None]
    pairs = []
    for o in old.types:
        if new.get(o.name) is not None:
            continue
        match = next((n for n in added if _kind(n) == _kind(o) and same_shape(old, o.name, new, n.name, set())), None)
        if match is not None:
            added.remove(match)
            pairs.append((o, match))
    return pairs


@rule("TYPE_ADDED", "a struct, union or enum was added", (Category.SOURCE,), Bump.MINOR)
def type_added(old: ir.Schema, new: ir.Schema) -> Out:
    renamed = {n.name for _, n in renamed_types(old, new)}
    for t in new.types:
        if old.get(t.name) is None and t.name not in renamed:
            yield t.loc, f'{_kind(t)} "{t.name}" was added'


@rule("TYPE_NO_DELETE", "a type was deleted: wire-compatible (no surviving field names it), but an API removal",
      (Category.SOURCE,), Bump.MINOR,
      remedy="keep the type (deprecate it in its doc comment) if code outside the schema imports it")
def type_no_delete(old: ir.Schema, new: ir.Schema) -> Out:
    renamed = {o.name for o, _ in renamed_types(old, new)}
    for t in old.types:
        if new.get(t.name) is None and t.name not in renamed:
            yield t.loc, f'{_kind(t)} "{t.name}" was deleted (generated code loses the class)'


@rule("TYPE_SAME_NAME", "a type was renamed (same shape, new name): the wire is unchanged, the generated API breaks",
      (Category.SOURCE,), Bump.MAJOR, remedy="keep the old type name")
def type_same_name(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in renamed_types(old, new):
        yield n.loc, f'{_kind(o)} "{o.name}" was renamed to "{n.name}"'


@rule("TYPE_SAME_KIND", "a type changed kind between struct, union and enum", ALL, Bump.FORBIDDEN,
      remedy="add a new type with a new name and migrate the fields that use it to new fields")
def type_same_kind(old: ir.Schema, new: ir.Schema) -> Out:
    for o, n in common_types(old, new):
        if _kind(o) != _kind(n):
            yield n.loc, f'"{n.name}" changed kind from {_kind(o)} to {_kind(n)}'
