"""Structural comparison of field types across two revisions.

Typedefs are already resolved by the parser, so `list<i64>` compares equal however it was
spelled. Element types of lists, sets and maps are compared recursively; the worst change at any
depth decides. A reference to a *differently named* type is compatible only when the two types
have the same shape (same kind, fields by id/name/requiredness/default/type, enum values): a
rename of the referenced type alone does not change the wire. That comparison is cycle-safe
(recursive types such as Argument -> map<string, Argument>): a pair already being compared is
assumed equal.
"""

from __future__ import annotations

import enum

from .. import ir

_INT_WIDTH = {"byte": 8, "i16": 16, "i32": 32, "i64": 64}


class TypeChange(enum.IntEnum):
    """How a field's type changed, ordered from harmless to forbidden."""

    SAME = 0
    ENUM_INT = 1  # i32 <-> enum: the same ints on the wire (API change)
    WIDENED = 2  # byte/i16/i32 -> a wider int: JSON reads old data; binary and old readers do not
    LIST_SET = 3  # list <-> set: the same JSON array, a different binary type and semantics
    INCOMPATIBLE = 4


def compare(old: ir.Schema, a: ir.TypeRef, new: ir.Schema, b: ir.TypeRef,
            assumed: set[tuple[str, str]] | None = None) -> TypeChange:
    """Classify the change from type `a` (in `old`) to type `b` (in `new`)."""
    assumed = set() if assumed is None else assumed
    if a.kind == "named" and b.kind == "named":
        if a.name == b.name:
            return TypeChange.SAME  # the type's own changes are findings of their own
        return TypeChange.SAME if same_shape(old, a.name, new, b.name, assumed) else TypeChange.INCOMPATIBLE
    if _is_enum_int(old, a, b) or _is_enum_int(new, b, a):
        return TypeChange.ENUM_INT
    if a.kind == "base" and b.kind == "base":
        if a.name == b.name:
            return TypeChange.SAME
        if a.name in _INT_WIDTH and b.name in _INT_WIDTH and _INT_WIDTH[a.name] < _INT_WIDTH[b.name]:
            return TypeChange.WIDENED
        return TypeChange.INCOMPATIBLE
    containers = {"list", "set"}
    if (a.kind in containers and b.kind in containers) or a.kind == b.kind == "map":
        inner = max(compare(old, x, new, y, assumed) for x, y in zip(a.args, b.args, strict=True))
        return max(inner, TypeChange.LIST_SET) if a.kind != b.kind else inner
    return TypeChange.INCOMPATIBLE


def _is_enum_int(sa: ir.Schema, a: ir.TypeRef, b: ir.TypeRef) -> bool:
    return (a.kind == "named" and isinstance(sa.get(a.name), ir.Enum)
            and b.kind == "base" and b.name == "i32")


def same_shape(old: ir.Schema, a: str, new: ir.Schema, b: str, assumed: set[tuple[str, str]]) -> bool:
    """True when old type `a` and new type `b` are interchangeable on the wire (names aside)."""
    if (a, b) in assumed:
        return True
    ta, tb = old.get(a), new.get(b)
    if ta is None or tb is None:
        return False
    assumed.add((a, b))
    if not _same_shape(old, ta, new, tb, assumed):
        assumed.discard((a, b))  # only pairs still being compared may be assumed equal
        return False
    return True


def _same_shape(old: ir.Schema, ta: ir.TypeDef, new: ir.Schema, tb: ir.TypeDef,
                assumed: set[tuple[str, str]]) -> bool:
    if isinstance(ta, ir.Enum) or isinstance(tb, ir.Enum):
        return (isinstance(ta, ir.Enum) and isinstance(tb, ir.Enum)
                and {(v.name, v.value) for v in ta.values} == {(v.name, v.value) for v in tb.values})
    if ta.kind != tb.kind or len(ta.fields) != len(tb.fields):
        return False
    fb = {f.id: f for f in tb.fields}
    for f in ta.fields:
        g = fb.get(f.id)
        if g is None or (f.name, f.requiredness, f.has_default, f.default) != (
                g.name, g.requiredness, g.has_default, g.default):
            return False
        if compare(old, f.type, new, g.type, assumed) != TypeChange.SAME:
            return False
    return True
