"""How every node of a spec sits in the arrays under the call layout its package decides, and how it
was decided: what `externspec inspect` shows (issue 44, item 2).

The decision is the executors' own (`call_layout.LayoutChoice`, the C++ twin's rules): the layout
the file states (schema 1.2's `call_layout`), NODE_ARGUMENTS for a versioned file stating none, and
for a torch-written file the first call of the package's wrapper that matches only one of a node's
two candidate layouts (`decide_at_load`, as `es.cpp.AOTIRunner` and `es.ProxyExecutor(...,
call_lengths=)` decide at load). Each node's layout under it is `layout.node_layout`, from which both
executors plan. Without the wrapper's calls (a bare torch-written `*.wrapper.json`) a node with two
candidates stays undecided, as it does in an executor until its first call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from .._generated.models import CallLayout, ExternKernelNodes
from ..errors import SpecMismatchError
from .call_layout import LayoutChoice, planned_layout
from .layout import NodeLayout, node_label, node_layout
from .ops import SchemaCache


@dataclasses.dataclass(frozen=True)
class _Plan:
    """What `LayoutChoice` reads of a plan: its label and the lengths of its arrays."""

    label: str
    num_ints: int
    num_tensors: int
    layout: NodeLayout


def _plan(label: str, layout: NodeLayout) -> _Plan:
    return _Plan(label, layout.int_inputs + layout.int_outputs, layout.tensor_inputs + layout.tensor_outputs, layout)


@dataclasses.dataclass(frozen=True)
class SpecLayout:
    """`layout`: the spec's call layout (None: undecided, or no node's candidates differ);
    `decided_by`: how; `nodes`: each node's layout under it (a SpecMismatchError where the executors
    refuse the node, an undecided node's OMITTED_DEFAULTS_PASSED candidate); `candidates`: the nodes
    whose two layouts differ, each with both; `refused`: the wrapper's calls fit no layout (the
    runner refuses the package)."""

    layout: CallLayout | None
    decided_by: str
    nodes: tuple[NodeLayout | SpecMismatchError, ...]
    candidates: dict[int, dict[CallLayout, NodeLayout]]
    refused: SpecMismatchError | None = None

    def of(self, index: int) -> NodeLayout | None:
        """Node `index`'s layout under the decided layout; None when it is refused or undecided."""
        node = self.nodes[index]
        if isinstance(node, SpecMismatchError) or (self.layout is None and index in self.candidates):
            return None
        return self.candidates[index][self.layout] if index in self.candidates and self.layout else node


def _stated_by(spec: ExternKernelNodes) -> str:
    if spec.call_layout is not None:
        return "stated by the file (call_layout)"
    return "the file has a schema_version: externspec wrote it, and its nodes name every argument"


def spec_layout(spec: ExternKernelNodes, call_lengths: Iterable[tuple[int, int, int]] | None = None,
                cache: SchemaCache | None = None) -> SpecLayout:
    """The call layout of `spec` and each node's layout under it; `call_lengths`: the (node, num_ints,
    num_tensors) of each call of the package's wrapper (`aoti.wrapper_call_lengths`), None without one."""
    cache = cache or SchemaCache()
    planned = planned_layout(spec.schema_version, spec.call_layout, None)
    choice = LayoutChoice(planned)
    plan_as = planned or CallLayout.OMITTED_DEFAULTS_PASSED
    nodes: list[NodeLayout | SpecMismatchError] = []
    plans: list[_Plan | None] = []
    for i, entry in enumerate(spec.nodes):
        label = node_label(i, entry.name, entry.node.target)
        try:
            layout = node_layout(entry.node, layout=plan_as, index=i,
                                 name=entry.name, cache=cache)
        except SpecMismatchError as e:
            nodes.append(e)
            plans.append(None)
            continue
        nodes.append(layout)
        plans.append(_plan(label, layout))
        if planned is None and layout.passed_ints:
            other = node_layout(entry.node, layout=CallLayout.NODE_ARGUMENTS, index=i, name=entry.name, cache=cache)
            choice.candidates[i] = {plan_as: _plan(label, layout), CallLayout.NODE_ARGUMENTS: _plan(label, other)}
    refused = None
    if call_lengths is not None:
        calls = [c for c in call_lengths if not (0 <= c[0] < len(plans)) or plans[c[0]] is not None]
        try:
            choice.decide_at_load(plans, calls)
        except SpecMismatchError as e:
            refused = e
    candidates = {i: {k: p.layout for k, p in both.items()} for i, both in choice.candidates.items()}
    decided = choice.layout if candidates or planned else None
    return SpecLayout(decided, _decided_by(spec, planned, choice, call_lengths), tuple(nodes), candidates, refused)


def _decided_by(spec: ExternKernelNodes, planned: CallLayout | None, choice: LayoutChoice,
                call_lengths: Iterable[tuple[int, int, int]] | None) -> str:
    if planned is not None:
        return _stated_by(spec)
    if not choice.candidates:
        return "no node's two call layouts differ: every call is laid out alike"
    if choice.layout is not None:
        return f"decided by {choice.decided_by}"
    if call_lengths is None:
        return ("a torch-written file without its wrapper source: its first call decides at run time between "
                "NODE_ARGUMENTS (torch 2.15's wrappers) and OMITTED_DEFAULTS_PASSED (2.11 to 2.14's)")
    return "no call of the package's wrapper decides it: its first call decides at run time"
