"""Upgraders: turn a document written under an older schema major into the next major.

docs/versioning.md: a reader requires its own major; older majors go through registered upgraders. An
upgrader is a pure function over the parsed JSON of one document type, registered for the major
it upgrades *from*; `upgrade` applies them in order (N -> N+1 -> ... -> the reader's major) and
stamps each result with `schema_version` (N+1).0, the first version of the next major. The
result is then validated by the reader like any document, so an upgrader cannot smuggle in a
malformed document.

Register upgraders next to the schema change that needs them (a major bump), e.g.:

    @upgrade.register("ExternKernelNodes", from_major=1)
    def _v1_to_v2(doc: dict) -> dict:
        for n in doc["nodes"]:
            n["buffer"] = n.pop("name")
        return doc

The C++ decoder does not run upgraders: it refuses older majors and names `externspec upgrade
IN OUT`, the command that runs these in Python and writes the upgraded file.
"""

from __future__ import annotations

import copy as _copy
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import VersionError

Upgrader = Callable[[dict[str, Any]], dict[str, Any]]

_REGISTRY: dict[tuple[str, int], Upgrader] = {}


def register(document: str, from_major: int) -> Callable[[Upgrader], Upgrader]:
    """Decorator: `fn` upgrades `document` (a model class name) from major `from_major` to the next."""

    def add(fn: Upgrader) -> Upgrader:
        key = (document, from_major)
        if key in _REGISTRY and _REGISTRY[key] is not fn:
            raise ValueError(f"an upgrader of {document} from major {from_major} is already registered")
        _REGISTRY[key] = fn
        return fn

    return add


def unregister(document: str, from_major: int) -> None:
    _REGISTRY.pop((document, from_major), None)


@contextmanager
def registered(document: str, from_major: int, fn: Upgrader) -> Iterator[Upgrader]:
    """Register `fn` for the duration of a `with` block (tests, one-off tools)."""
    register(document, from_major)(fn)
    try:
        yield fn
    finally:
        unregister(document, from_major)


def first_missing_step(document: str, from_major: int, to_major: int) -> int | None:
    """The first major in [from_major, to_major) that has no upgrader, or None.

    Lazy on purpose: the range comes from a document, and a hostile major (-10**18) must cost no
    more than the registered upgraders do (the scan stops at the first gap)."""
    return next((m for m in range(from_major, to_major) if (document, m) not in _REGISTRY), None)


def upgrade(doc: dict[str, Any], document: str, from_version: tuple[int, int], to_major: int, *,
            copy: bool = True, source: str | None = None) -> dict[str, Any]:
    """Apply the upgraders of `document` from `from_version`'s major up to `to_major`.

    `copy=False` lets the upgraders work on `doc` itself (the caller owns it). Raises
    `VersionError` naming the first missing step.
    """
    missing = first_missing_step(document, from_version[0], to_major)
    if missing is not None:
        raise VersionError(
            f"document schema {from_version[0]}.{from_version[1]} has major version "
            f"{from_version[0]}; this reader reads major {to_major} and has no upgrader of {document} "
            f"from major {missing} to {missing + 1}", path="$.schema_version", source=source
        )
    out = _copy.deepcopy(doc) if copy else doc
    for major in range(from_version[0], to_major):
        out = _REGISTRY[(document, major)](out)
        if not isinstance(out, dict):
            raise TypeError(f"the upgrader of {document} from major {major} returned {type(out).__name__}, not a dict")
        out["schema_version"] = {"major": major + 1, "minor": 0}
    return out
