"""Reserved field ids and names: the `reserved_ids` / `reserved_names` type annotations.

A deleted field (or enum value) must leave its id and name reserved so that no later revision
reuses them with a different meaning; the linter and the compatibility checker both read them here.

    struct Device {
      10: string type;
    } (reserved_ids = "20", reserved_names = "index")

Ids are comma-separated integers or inclusive ranges (`"20, 40-49"`); for an enum they are
reserved numbers. Names are comma-separated identifiers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import ir

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RANGE = re.compile(r"^(-?\d+)\s*-\s*(-?\d+)$")


@dataclass(frozen=True)
class Reserved:
    ids: frozenset[int]
    names: frozenset[str]


def parse_ids(text: str) -> frozenset[int]:
    """Parse `"20, 40-49"`; raises ValueError naming the bad item."""
    out: set[int] = set()
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        m = _RANGE.match(item)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if lo > hi:
                raise ValueError(f"empty id range {item!r}")
            out.update(range(lo, hi + 1))
        elif re.fullmatch(r"-?\d+", item):
            out.add(int(item))
        else:
            raise ValueError(f"{item!r} is not an id or an id range")
    return frozenset(out)


def parse_names(text: str) -> frozenset[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    for name in names:
        if not _IDENT.match(name):
            raise ValueError(f"{name!r} is not a name")
    return frozenset(names)


def reserved(t: ir.TypeDef) -> Reserved:
    """The reserved ids and names of a struct, union or enum (ValueError if malformed)."""
    anns = dict(t.annotations)
    return Reserved(parse_ids(anns.get("reserved_ids", "")), parse_names(anns.get("reserved_names", "")))


def reserved_or_empty(t: ir.TypeDef) -> Reserved:
    """Like `reserved`, but malformed annotations count as empty (lint reports them)."""
    try:
        return reserved(t)
    except ValueError:
        return Reserved(frozenset(), frozenset())
