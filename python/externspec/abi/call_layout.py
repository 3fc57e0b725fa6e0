"""Which call layout a spec's calls use (docs/torch-compat.md, "The call layout"); the C++ twin is
cpp/csrc/executor/call_layout.cpp, and tests/abi/test_call_layout.py runs one body over both.

A torch-written node whose omitted kwarg-only defaults take int slots has two candidate layouts
(`CallLayout`): NODE_ARGUMENTS (torch 2.15's wrappers) and OMITTED_DEFAULTS_PASSED (2.11 to 2.14's),
which differ exactly by those slots, so a call's own `num_ints` matches at most one of them. A
package has one layout: the first call (or, at load, the first call of the package's wrapper) that
matches only one candidate decides it for every node, and a later call matching only the other is
refused naming both. Nodes whose candidates coincide have one plan and never ask.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from .._generated.models import CallLayout
from ..errors import CallError, SpecMismatchError
from ..messages import message

__all__ = ["LayoutChoice", "call_layout_option", "planned_layout"]


def call_layout_option(value: CallLayout | str) -> CallLayout | None:
    """The executors' `call_layout` option: "auto" (None: decided from the calls) or a `CallLayout`,
    by member or name. ValueError for anything else."""
    if isinstance(value, CallLayout):
        return value
    if value == "auto":
        return None
    if isinstance(value, str) and value in CallLayout.__members__:
        return CallLayout[value]
    raise ValueError(message("CALL_LAYOUT_OPTION_UNKNOWN", value=repr(value)))


def planned_layout(schema_version: Any, stated: CallLayout | None, option: CallLayout | None) -> CallLayout | None:
    """The layout a spec is planned by: the one it states (`call_layout`, schema 1.2); NODE_ARGUMENTS
    for a versioned file that states none (schema 1.0 and 1.1: externspec wrote it, and its nodes name
    every argument their arrays carry); for a torch-written file (no `schema_version`), the option
    (None: "auto", decided from the calls). An option other than the file's layout is a
    SpecMismatchError naming both."""
    if stated is None and schema_version is None:
        return option
    layout = stated if stated is not None else CallLayout.NODE_ARGUMENTS
    if option is not None and option != layout:
        why = (message("CALL_LAYOUT_STATED", layout=layout.name) if stated is not None else
               message("CALL_LAYOUT_VERSIONED"))
        raise SpecMismatchError(message("CALL_LAYOUT_OPTION_CONFLICT", option=option.name, layout=layout.name, why=why))
    return layout


def _lengths(plan: Any) -> str:
    return message("CALL_LENGTHS_PAIR", num_tensors=plan.num_tensors, num_ints=plan.num_ints)


class LayoutChoice:
    """The layout of one spec's calls and the nodes with two candidate plans (`candidates`: node ->
    {CallLayout: plan}); plans are the executor's (`label`, `num_ints`, `num_tensors`)."""

    def __init__(self, layout: CallLayout | None):
        self.layout = layout
        self.decided_by = message("DECIDED_BY_OPTION") if layout is not None else ""
        self.candidates: dict[int, dict[CallLayout, Any]] = {}

    def _matching(self, index: int, num_ints: int, num_tensors: int) -> CallLayout | None:
        return next((layout for layout, p in self.candidates[index].items()
                     if p.num_ints == num_ints and p.num_tensors == num_tensors), None)

    def _refusal(self, index: int, passes: str, matched: CallLayout | None) -> str:
        """Why a call's lengths (`passes`) cannot run node `index`, naming both its candidates."""
        both = self.candidates[index]
        label = both[CallLayout.NODE_ARGUMENTS].label
        if matched is None:
            return message("CALL_MATCHES_NO_LAYOUT", label=label, passes=passes,
                           node_arguments=_lengths(both[CallLayout.NODE_ARGUMENTS]),
                           defaults_passed=_lengths(both[CallLayout.OMITTED_DEFAULTS_PASSED]))
        assert self.layout is not None
        return message("CALL_OTHER_LAYOUT", label=label, passes=passes, matched=matched.name, layout=self.layout.name,
                       decided_by=self.decided_by, lengths=_lengths(both[self.layout]))

    def _decide(self, index: int, layout: CallLayout, by: str) -> bool:
        """Lock `layout` (False when another one is locked already)."""
        if self.layout is None:
            self.layout, self.decided_by = layout, by
        return self.layout == layout

    def decide_at_load(self, plans: list[Any], calls: Iterable[tuple[int, int, int]]) -> None:
        """Each call of the package's wrapper, (node, num_ints, num_tensors) as its
        `aoti_torch_proxy_executor_call_function` line states them (`aoti.wrapper_call_lengths`),
        checked against its node's plans, the first decisive one locking the layout.
        SpecMismatchError naming the node when a call matches no plan."""
        for index, num_ints, num_tensors in calls:
            if not 0 <= index < len(plans):
                raise SpecMismatchError(message("WRAPPER_CALLS_NO_NODE", index=index, count=len(plans)))
            passes = message("WRAPPER_CALL_PASSES", num_tensors=num_tensors, num_ints=num_ints)
            if index not in self.candidates:
                plan = plans[index]
                if plan.num_ints != num_ints or plan.num_tensors != num_tensors:
                    raise SpecMismatchError(message("CALL_PLAN_TAKES", label=plan.label, passes=passes,
                                                    lengths=_lengths(plan)), node=index)
                continue
            matched = self._matching(index, num_ints, num_tensors)
            if matched is None or not self._decide(index, matched, message("DECIDED_BY_WRAPPER", index=index)):
                raise SpecMismatchError(self._refusal(index, passes, matched), node=index)

    def apply(self, plans: list[Any]) -> None:
        """Each node with candidates gets the decided one's plan, or (undecided) its NODE_ARGUMENTS
        candidate marked `layout_undecided`, so its calls reach `resolve` until one decides."""
        for index, both in self.candidates.items():
            plans[index] = both[self.layout] if self.layout is not None else dataclasses.replace(
                both[CallLayout.NODE_ARGUMENTS], layout_undecided=True)

    def resolve(self, index: int, num_ints: int, num_tensors: int, plans: list[Any]) -> Any:
        """The plan a call of node `index` whose lengths are not its plan's runs by: None when the
        node has one layout (a plain length mismatch), else the candidate the lengths match, the
        first such call locking the spec's layout. CallError naming both candidates otherwise."""
        if index not in self.candidates:
            return None
        matched = self._matching(index, num_ints, num_tensors)
        if matched is None or not self._decide(index, matched, message("DECIDED_BY_FIRST_CALL", index=index)):
            got = message("CALL_GOT", num_tensors=num_tensors, num_ints=num_ints)
            raise CallError(self._refusal(index, got, matched), node=index)
        self.apply(plans)
        return plans[index]
