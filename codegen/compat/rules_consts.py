"""Rules over constants and namespaces: part of the generated API, not of documents.

SCHEMA_VERSION is excluded: the checker compares it with the required bump instead.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import ir
from .model import Bump, Category
from .pairing import show_value
from .registry import rule

Out = Iterator[tuple[ir.SourceLoc, str]]
VERSION_CONST = "SCHEMA_VERSION"


def _consts(s: ir.Schema) -> dict[str, ir.Const]:
    return {c.name: c for c in s.consts if c.name != VERSION_CONST}


@rule("CONST_ADDED", "a constant was added", (Category.SOURCE,), Bump.MINOR)
def const_added(old: ir.Schema, new: ir.Schema) -> Out:
    was = _consts(old)
    for name, c in _consts(new).items():
        if name not in was:
            yield c.loc, f'const "{name}" was added'


@rule("CONST_NO_DELETE", "a constant was deleted", (Category.SOURCE,), Bump.MAJOR, remedy="keep the constant")
def const_no_delete(old: ir.Schema, new: ir.Schema) -> Out:
    now = _consts(new)
    for name, c in _consts(old).items():
        if name not in now:
            yield c.loc, f'const "{name}" was deleted'


@rule("CONST_SAME_VALUE", "a constant changed type or value (readers that check against it change behaviour)",
      (Category.SOURCE, Category.WIRE_JSON), Bump.MAJOR, remedy="keep the old value, or add a new constant")
def const_same_value(old: ir.Schema, new: ir.Schema) -> Out:
    was = _consts(old)
    for name, c in _consts(new).items():
        w = was.get(name)
        if w is not None and (w.type, w.value) != (c.type, c.value):
            yield c.loc, f'const "{name}" changed from {w.type} {show_value(w.value)} to {c.type} {show_value(c.value)}'


@rule("NAMESPACE_SAME", "a namespace changed: generated code moves (imports break)", (Category.SOURCE,), Bump.MAJOR,
      remedy="restore the namespace")
def namespace_same(old: ir.Schema, new: ir.Schema) -> Out:
    was, now = dict(old.namespaces), dict(new.namespaces)
    for scope in sorted(set(was) | set(now)):
        if was.get(scope) != now.get(scope):
            yield ir.SourceLoc(new.path, 1), (f'namespace {scope} changed from {was.get(scope) or "(none)"} '
                                              f'to {now.get(scope) or "(none)"}')

