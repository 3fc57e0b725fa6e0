"""Naming the passed defaults: a torch-written extern-kernel file rewritten so that every node names
the kwarg-only defaults its compiled wrapper passes in the int array (docs/torch-compat.md,
"Rewriting a package for every runner").

torch 2.11 to 2.14 pass the default of every kwarg-only argument a node omits in the call's arrays
(call layout OMITTED_DEFAULTS_PASSED); torch 2.15's wrapper and runner, and externspec's exporter,
pass only what the node names (NODE_ARGUMENTS). A node that names every argument its arrays carry
means the same under both, so the rewritten file runs under every torch's runner and every
externspec executor, and is stamped NODE_ARGUMENTS.

Which layout a torch-written file has is decided from evidence, never guessed: the lengths of each
call in the package's `*.wrapper.cpp` (`aoti.wrapper_call_lengths`), checked against each node's two
candidate layouts by the executors' own rule (`call_layout.LayoutChoice`, so `upgrade` and a
loading executor cannot disagree), or the compiling torch release the user states. A node whose two
candidates take the same int slots says nothing and needs no rewrite.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from .._generated.models import (
    SCHEMA_VERSION,
    ArgumentKind,
    CallLayout,
    ExternKernelNodes,
    NamedArgument,
)
from ..errors import ExternSpecError, SpecMismatchError
from . import SlotKind
from .call_layout import LayoutChoice
from .layout import NodeLayout, node_label, node_layout
from .ops import SchemaCache

# The call layout of the wrappers of each torch release externspec supports (docs/torch-compat.md).
RELEASE_LAYOUTS: dict[str, CallLayout] = {
    "2.11": CallLayout.OMITTED_DEFAULTS_PASSED,
    "2.12": CallLayout.OMITTED_DEFAULTS_PASSED,
    "2.13": CallLayout.OMITTED_DEFAULTS_PASSED,
    "2.14": CallLayout.OMITTED_DEFAULTS_PASSED,
    "2.15": CallLayout.NODE_ARGUMENTS,
}


def release_layout(release: str) -> CallLayout:
    """The call layout of the wrappers torch `release` ("2.13", or "2.13.0+cpu") compiles; an
    ExternSpecError naming the known releases for any other."""
    minor = ".".join(release.split("+")[0].split(".")[:2])
    if minor not in RELEASE_LAYOUTS:
        raise ExternSpecError(f"torch {release}: not a release whose call layout externspec knows "
                              f"({', '.join(RELEASE_LAYOUTS)})")
    return RELEASE_LAYOUTS[minor]


@dataclasses.dataclass(frozen=True)
class _Lengths:
    """A call's lengths under one layout: what `LayoutChoice` reads of an executor's plan."""

    label: str
    num_ints: int
    num_tensors: int


@dataclasses.dataclass(frozen=True)
class Candidates:
    """Node `index` under both call layouts: the int slots its call takes under each, and its inputs
    with the passed defaults named (in schema order, each default a KEYWORD argument as torch's
    serializer writes a kwarg)."""

    index: int
    label: str  # as the executors name the node
    ints_named: int  # NODE_ARGUMENTS: int inputs and int returns of the node as written
    ints_passed: int  # OMITTED_DEFAULTS_PASSED: the same with the omitted kwarg-only defaults
    tensors: int  # tensor inputs and output slots, the same under both
    named_inputs: tuple[NamedArgument, ...]

    @property
    def differs(self) -> bool:
        return self.ints_named != self.ints_passed

    def lengths(self, layout: CallLayout) -> _Lengths:
        """The call's lengths under `layout`, in the shape `LayoutChoice` reads an executor's plan."""
        ints = self.ints_passed if layout == CallLayout.OMITTED_DEFAULTS_PASSED else self.ints_named
        return _Lengths(self.label, ints, self.tensors)


def _ints(layout: NodeLayout) -> int:
    return layout.int_inputs + layout.int_outputs


def candidates(nodes: ExternKernelNodes) -> list[Candidates]:
    """Both layouts of every node, by the executors' own layout rules (`node_layout`): a
    SpecMismatchError naming the node where they refuse it (an op not registered in this process)."""
    cache = SchemaCache()
    out = []
    for i, entry in enumerate(nodes.nodes):
        node = entry.node
        passed = node_layout(node, layout=CallLayout.OMITTED_DEFAULTS_PASSED, index=i, name=entry.name, cache=cache)
        named = node_layout(node, layout=CallLayout.NODE_ARGUMENTS, index=i, name=entry.name, cache=cache)
        given = {a.name: a for a in node.inputs}
        inputs = []
        for a in passed.args:  # schema order: the node's own inputs, and the defaults that take int slots
            if a.given:
                inputs.append(given[a.name])
            elif a.kind == SlotKind.INT and a.count > 0 and a.arg is not None:
                inputs.append(NamedArgument(name=a.name, arg=a.arg, kind=ArgumentKind.KEYWORD))
        label = node_label(i, entry.name, node.target)
        tensors = passed.tensor_inputs + passed.tensor_outputs
        out.append(Candidates(i, label, _ints(named), _ints(passed), tensors, tuple(inputs)))
    return out


@dataclasses.dataclass(frozen=True)
class Decision:
    """The call layout a torch-written file has, and the evidence it was decided from."""

    layout: CallLayout
    evidence: str


def decide(found: list[Candidates], calls: Iterable[tuple[int, int, int]] | None, compiled_by: str | None) -> Decision:
    """The file's call layout: from the wrapper's calls, (node, num_ints, num_tensors) each
    (`aoti.wrapper_call_lengths`), decided as an executor loading the package decides it
    (`LayoutChoice.decide_at_load`), else from the release the user says compiled it. An
    ExternSpecError naming the node (and both candidates) where a call matches neither, where calls
    disagree, where no call decides, or where no evidence is given but needed."""
    differing = [c for c in found if c.differs]
    if not differing:
        return Decision(CallLayout.NODE_ARGUMENTS, "no node omits a kwarg-only default that takes int slots")
    if calls is None:
        if compiled_by is None:
            c = differing[0]
            raise ExternSpecError(
                f"{c.label} takes {c.ints_passed} ints if the wrapper passed the omitted kwarg-only defaults "
                f"(torch 2.11 to 2.14) and {c.ints_named} if not (torch 2.15), and there is no wrapper source to "
                "tell: state the torch that compiled it (--torch RELEASE)", node=c.index)
        return Decision(release_layout(compiled_by), f"compiled by torch {compiled_by}, as stated")
    choice = LayoutChoice(None)
    choice.candidates = {c.index: {layout: c.lengths(layout) for layout in CallLayout} for c in differing}
    choice.decide_at_load([c.lengths(CallLayout.OMITTED_DEFAULTS_PASSED) for c in found], calls)
    if choice.layout is None:
        c = differing[0]
        raise ExternSpecError(f"{c.label}: the wrapper source has no call of it or of any node whose call layouts "
                              "differ", node=c.index)
    if compiled_by is not None and release_layout(compiled_by) != choice.layout:
        raise ExternSpecError(f"the wrapper's calls say {choice.layout.name} ({choice.decided_by}), but torch "
                              f"{compiled_by} writes {release_layout(compiled_by).name}")
    return Decision(choice.layout, f"decided by {choice.decided_by}")


def name_passed_defaults(nodes: ExternKernelNodes, decision: Decision, found: list[Candidates],
                         producer: str) -> ExternKernelNodes:
    """`nodes` with every passed default named (when the decision is OMITTED_DEFAULTS_PASSED), stamped
    with this schema version, call layout NODE_ARGUMENTS and a producer recording the decision."""
    rewritten = 0
    entries = []
    for entry, c in zip(nodes.nodes, found, strict=True):
        if decision.layout == CallLayout.OMITTED_DEFAULTS_PASSED and c.differs:
            entry = entry.model_copy(update={"node": entry.node.model_copy(update={"inputs": list(c.named_inputs)})})
            rewritten += 1
        entries.append(entry)
    note = (f"{producer}: a torch-written file, call layout {decision.layout.name} ({decision.evidence}); "
            f"{rewritten} nodes name the defaults passed")
    return nodes.model_copy(update={"nodes": entries, "schema_version": SCHEMA_VERSION,
                                    "call_layout": CallLayout.NODE_ARGUMENTS, "producer": note})


def rewrite(nodes: ExternKernelNodes, calls: Iterable[tuple[int, int, int]] | None, compiled_by: str | None,
            producer: str) -> tuple[ExternKernelNodes, Decision]:
    """A torch-written file (no `schema_version`) rewritten to name its passed defaults, with the
    decision it took. ExternSpecError for a file externspec wrote (its nodes name their arguments)."""
    if nodes.schema_version is not None:
        raise SpecMismatchError("the file carries schema_version: externspec wrote it, and its nodes already name "
                                "every argument their arrays carry")
    found = candidates(nodes)
    decision = decide(found, calls, compiled_by)
    return name_passed_defaults(nodes, decision, found, producer), decision
