"""Which registered ops a spec may name, read from the policy data both executors share.

The data is `include/externspec/torch/op_policy.def` (the C++ executor #includes the same file):
denied ops (files, other processes, process-wide state, memory outside the call's tensors, kernels
that crash or hang on arguments they do not check), guards against static arguments that crash a
kernel, checks of the ints a kernel leaves unchecked (made at each call: `ES_CHECK`), and bounds on
node metadata. A user who trusts a spec's use of a denied op names it in `allow_ops`; guards, checks
and bounds always apply.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .._def_file import TORCH_DEF_DIR, entries
from .._generated.models import Argument
from ..errors import SpecMismatchError
from ..messages import message

__all__ = [
    "POLICY_FILE",
    "Check",
    "Guard",
    "Policy",
    "SchemaDefault",
    "check_allow_ops",
    "check_guards",
    "check_message",
    "check_op_schema_text",
    "checks",
    "denial",
    "denied_message",
    "matches",
    "policy",
]

POLICY_FILE = TORCH_DEF_DIR / "op_policy.def"

_PATTERN = re.compile(r"[A-Za-z_]\w*::(?:\*|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)\Z")


@dataclass(frozen=True)
class Guard:
    op: str
    conditions: tuple[tuple[str, str], ...]  # (argument, "None" | "False" | "True"), all must hold
    reason: str


_RULE = re.compile(r"dims\Z|(-?\d+|rank)\.\.(-?\d+|rank)\Z")


@dataclass(frozen=True)
class Check:
    """ES_CHECK: a precondition of int / int[] argument `arg`, checked at each call."""

    op: str  # a pattern, as for denied
    arg: str
    rule: str  # "dims", or "lo..hi" (each bound an integer or "rank")
    tensor: str  # the tensor argument whose rank `dims` and `rank` mean ("" when the rule needs none)
    reason: str

    def problem(self, values: list[int], rank: int) -> str | None:
        """What is wrong with `values` (the argument's ints; `rank`: the tensor's), or None. The
        C++ executor (op_policy.cpp, `problem`) words it alike."""
        if self.rule == "dims":
            seen: set[int] = set()
            for d in values:
                if not 0 <= d < rank:
                    return message("NOT_A_DIM", dim=d, tensor=self.tensor, last=rank - 1)
                if d in seen:
                    return message("DIM_GIVEN_TWICE", dim=d)
                seen.add(d)
            return None
        lo_text, _, hi_text = self.rule.partition("..")
        lo, hi = (rank if b == "rank" else int(b) for b in (lo_text, hi_text))
        for v in values:
            if not lo <= v <= hi:
                has = f" (`{self.tensor}` has {rank} dims)" if "rank" in self.rule else ""
                return f"{v} is not in {lo}..{hi}{has}"
        return None


@dataclass(frozen=True)
class Policy:
    denied: dict[str, str]  # pattern -> reason
    reviewed: dict[str, str]
    guards: tuple[Guard, ...]  # `op` is a pattern, as for denied
    checks: tuple[Check, ...]
    limits: dict[str, int]


@functools.cache
def policy() -> Policy:
    denied: dict[str, str] = {}
    reviewed: dict[str, str] = {}
    guards: list[Guard] = []
    checks: list[Check] = []
    limits: dict[str, int] = {}
    for where, kind, fields in entries(POLICY_FILE):
        if kind in ("ES_DENY", "ES_REVIEWED") and len(fields) == 2:
            (denied if kind == "ES_DENY" else reviewed)[fields[0]] = fields[1]
        elif kind == "ES_GUARD" and len(fields) == 6:
            op, a1, v1, a2, v2, reason = fields
            conditions = ((a1, v1), (a2, v2)) if a2 else ((a1, v1),)
            guards.append(Guard(op, conditions, reason))
        elif kind == "ES_LIMIT" and len(fields) == 2:
            limits[fields[0]] = int(fields[1])
        elif kind == "ES_CHECK" and len(fields) == 5 and _RULE.match(fields[2]) and \
                bool(fields[3]) == ("dims" in fields[2] or "rank" in fields[2]):
            checks.append(Check(*fields))
        else:
            raise ValueError(f"{where}: malformed {kind} entry: {', '.join(fields)}")
    return Policy(denied, reviewed, tuple(guards), tuple(checks), limits)


def matches(pattern: str, qualified: str) -> bool:
    """Does a DENY/REVIEWED/allow pattern cover op `ns::name.overload` (overload `default` if none)?"""
    ns, _, rest = qualified.partition("::")
    if pattern == f"{ns}::*":
        return True
    return pattern == qualified if "." in pattern else pattern == f"{ns}::{rest.partition('.')[0]}"


def check_allow_ops(allow_ops: Iterable[str]) -> tuple[str, ...]:
    """The user's allow list, each entry `ns::name`, `ns::name.overload` or `ns::*`."""
    if isinstance(allow_ops, str):
        raise TypeError("allow_ops must be a collection of op names, not one string")
    out = tuple(allow_ops)
    for entry in out:
        if not isinstance(entry, str) or not _PATTERN.match(entry):
            raise ValueError(message("ALLOW_OPS_ENTRY", entry=repr(entry)))
    return out


# Asked once per node, mostly about the same few ops; the policy never changes in a process.
@functools.lru_cache(maxsize=4096)
def denial(qualified: str, allow_ops: tuple[str, ...]) -> str | None:
    """Why op `ns::name.overload` is denied (None: it is not, or the user allowed it)."""
    for pattern, reason in policy().denied.items():
        if matches(pattern, qualified) and not any(matches(a, qualified) for a in allow_ops):
            return reason
    return None


@functools.lru_cache(maxsize=4096)
def checks(qualified: str) -> tuple[Check, ...]:
    """The ES_CHECK preconditions of op `ns::name.overload`, checked at each of its calls."""
    return tuple(c for c in policy().checks if matches(c.op, qualified))


def check_message(label: str, check: Check, value: int | list[int], problem: str) -> str:
    """Why a call of node `label` is refused: argument `check.arg` is `value`, which breaks `check`."""
    return message("POLICY_CHECK_REFUSED", label=label, arg=check.arg, value=value, problem=problem,
                   reason=check.reason)


def denied_message(label: str, qualified: str, reason: str) -> str:
    return message("OP_DENIED", label=label, op=qualified, reason=reason, allow=qualified.partition(".")[0])


def check_op_schema_text(label: str, key: str, text: str) -> None:
    """Bound node metadata that names an op schema before torch's recursive parser sees it."""
    limits = policy().limits
    max_bytes, max_depth = limits["op_schema_max_bytes"], limits["op_schema_max_depth"]
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise SpecMismatchError(message("METADATA_TOO_LONG", label=label, key=key, size=size, limit=max_bytes))
    depth = deepest = 0
    for c in text:
        if c in "([":
            depth += 1
            deepest = max(deepest, depth)
        elif c in ")]" and depth:
            depth -= 1
    if deepest > max_depth:
        raise SpecMismatchError(message("METADATA_TOO_DEEP", label=label, key=key, depth=deepest, limit=max_depth))


class SchemaDefault(Protocol):
    """What a guard reads of a schema argument (`ops.Param`)."""

    @property
    def has_default(self) -> bool: ...

    @property
    def default_value(self) -> Any: ...


def check_guards(label: str, qualified: str, params: Mapping[str, SchemaDefault],
                 given: Mapping[str, Argument]) -> None:
    """Refuse static arguments the op policy knows crash the kernel of op `qualified` (`params`: the
    schema's arguments by name; `given`: the node's; an omitted one is its default)."""
    for guard in policy().guards:
        if not matches(guard.op, qualified):
            continue
        if all(_static_is(given.get(name), params.get(name), value) for name, value in guard.conditions):
            said = " and ".join(f"`{name}` is {value}" for name, value in guard.conditions)
            raise SpecMismatchError(message("POLICY_GUARD_REFUSED", label=label, said=said, reason=guard.reason))


def _static_is(arg: Argument | None, p: SchemaDefault | None, value: str) -> bool:
    if p is None:
        return False
    if arg is None:
        return p.has_default and repr(p.default_value) == value
    if value == "None":
        return arg.type == "as_none"
    return arg.type == "as_bool" and repr(arg.value) == value
