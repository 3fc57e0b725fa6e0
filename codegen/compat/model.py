"""The checker's vocabulary: bumps, categories, rules and findings (plain data)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .. import ir


class Bump(enum.IntEnum):
    """The version bump a change needs; ordered, so the required bump is the max over findings."""

    NONE = 0
    MINOR = 1
    MAJOR = 2
    FORBIDDEN = 3  # no bump makes it safe: the change needs a new field (or type) instead

    def __str__(self) -> str:
        return self.name.lower()


class Category(enum.Enum):
    """What a rule protects: JSON readers and writers, Thrift binary, or code built on the models."""

    WIRE_JSON = "wire-JSON"
    WIRE_BINARY = "wire-binary"
    SOURCE = "source"

    def __str__(self) -> str:
        return self.value


WIRE = (Category.WIRE_JSON, Category.WIRE_BINARY)
ALL = (Category.WIRE_JSON, Category.WIRE_BINARY, Category.SOURCE)


@dataclass(frozen=True)
class Finding:
    """One classified change, printed as `file:line:col: [RULE_ID] message`."""

    rule: str
    bump: Bump
    loc: ir.SourceLoc
    message: str

    def __str__(self) -> str:
        return f"{self.loc}: [{self.rule}] {self.message}"

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.loc.file, self.loc.line, self.loc.col, self.rule, self.message)


# A check yields (location, message) pairs; the registry stamps rule id and bump on them.
Check = Callable[[ir.Schema, ir.Schema], Iterator[tuple[ir.SourceLoc, str]]]


@dataclass(frozen=True)
class Rule:
    """One compatibility rule: an id, a one-line purpose, what it protects, the bump it implies,
    a pure check over (old, new), and the usual remedy (shown as a remediation option)."""

    id: str
    purpose: str
    categories: tuple[Category, ...]
    bump: Bump
    check: Check
    remedy: str = ""

    def run(self, old: ir.Schema, new: ir.Schema) -> Iterator[Finding]:
        for loc, message in self.check(old, new):
            yield Finding(self.id, self.bump, loc, message)
