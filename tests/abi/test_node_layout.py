"""`externspec inspect` prints what the executors consume: on every node of the corpora, its JSON
slot counts equal the Python and the C++ executor's (the `executor` fixture), and a node it finds
no layout for is one both executors refuse, with the same message.

The nodes: the extern-kernel files of the wire conformance corpus (tests/conformance/valid), the
executor conformance corpus's hostile nodes (tests/abi/test_executor_conformance.py), every custom-op
and aten call of the replay tests (tests/abi/test_replay.py) as SpecBuilder writes it, torch-written
`aten::index_add` without `alpha` (a kwarg-only default torch's wrapper passes), and every node of
the torch-written AOTInductor packages (slow: compiled once, cached). Each node is loaded alone, in
a file with its document's schema_version, so one refused node does not hide the others."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import externspec as es
from externspec import aoti
from externspec.abi import split_target
from externspec.abi.layout import node_layout
from externspec.cli.commands._ops import load_advice
from externspec.cli.commands.inspect import describe
from tests.support import aoti_models, artifacts
from tests.support import custom_ops as co  # noqa: F401 (registers the ops the replay calls use)
from tests.support.calls import CALLS
from tests.support.executors import Executor, slot_counts
from tests.support.load_errors import LOAD_ERRORS
from tests.support.paths import CONFORMANCE

GUARDED = "refused by the executor's op policy:"  # a guard refuses a value, not a layout


def index_add(schema_version: es.SchemaVersion | None) -> es.ExternKernelNodes:
    t = {"as_tensor": {"name": "t"}}
    doc = {"nodes": [{"name": "buf0", "node": {
        "target": "aten::index_add", "metadata": {}, "outputs": [t],
        "inputs": [{"name": "self", "arg": t}, {"name": "dim", "arg": {"as_int": 0}},
                   {"name": "index", "arg": t}, {"name": "source", "arg": t}]}}]}
    spec = es.loads(json.dumps(doc), es.ExternKernelNodes)
    return spec.model_copy(update={"schema_version": schema_version})


def conformance_files() -> Iterator[tuple[str, Callable[[], es.ExternKernelNodes]]]:
    manifest = json.loads((CONFORMANCE / "manifest.json").read_text())
    for name, type_name in sorted(manifest["valid"].items()):
        if type_name == "ExternKernelNodes":
            yield name, lambda name=name: es.loads((CONFORMANCE / "valid" / name).read_text(), es.ExternKernelNodes)


def built(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> es.ExternKernelNodes:
    b = es.SpecBuilder()
    b.add(op, args, kwargs)
    return b.build()


SPECS: list[Any] = [
    *[pytest.param(make, id=f"conformance-{name}") for name, make in conformance_files()],
    *[pytest.param(lambda make=make: es.loads(json.dumps(make()), es.ExternKernelNodes), id=f"hostile-{case}")
      for case, make, _ in LOAD_ERRORS],
    *[pytest.param(lambda c=c: built(*c[1:]), id=f"replay-{c[0]}") for c in CALLS],
    pytest.param(lambda: index_add(None), id="torch-written-index_add-without-alpha"),
    pytest.param(lambda: index_add(es.SCHEMA_VERSION), id="versioned-index_add-without-alpha"),
    *[pytest.param(lambda model=model: aoti.read_package(aoti_models.compiled_package(model)).nodes,
                   id=f"aoti-{model.__name__}", marks=pytest.mark.slow)
      for model in (aoti_models.AllOps, aoti_models.KwOnlyFixed)],
    pytest.param(lambda: es.loads(artifacts.read_member(artifacts.aoti_package(), ".wrapper.json"),
                                  es.ExternKernelNodes), id="aoti-artifact-custom-ops", marks=pytest.mark.slow),
]


def load(executor: Executor, spec: es.ExternKernelNodes) -> tuple[tuple[int, ...] | None, str | None]:
    """(slot counts, None) as `slot_counts` gives them, or (None, why the executor refused the spec).
    The node's namespace is allowed: the op policy says whether a node may run, not how it is laid out.
    A torch-written file is laid out as inspect shows it, OMITTED_DEFAULTS_PASSED (torch 2.11 to 2.14's
    wrappers; "auto" would leave a node whose two layouts differ undecided until a call)."""
    try:
        allow = [f"{split_target(spec.nodes[0].node.target).namespace}::*"]
    except ValueError:
        allow = []
    layout = "OMITTED_DEFAULTS_PASSED" if spec.schema_version is None else "auto"
    try:
        return slot_counts(executor(spec, allow_ops=allow, call_layout=layout), 0), None
    except es.SpecMismatchError as exc:  # as inspect words it: an unregistered namespace's advice names --load
        return None, load_advice(exc, [(n.name, n.node) for n in spec.nodes])


@pytest.mark.parametrize("make", SPECS)
def test_inspect_prints_what_the_executor_consumes(make: Callable[[], es.ExternKernelNodes],
                                                   executor: Executor) -> None:
    from tests.support import artifact_ops  # noqa: F401 (the artifact package's ops)

    spec = make()
    for extern in spec.nodes:
        alone = spec.model_copy(update={"nodes": [extern]})
        # A torch-written file laid out as torch 2.11 to 2.14's wrappers call it (`load` plans it so).
        (shown,) = describe("spec.json", alone, call_lengths=_passed_lengths(alone))["nodes"]
        counts, refused = load(executor, alone)
        if shown["slots"] is None:  # the executor refuses it too (a guard is checked first)
            assert refused == shown["slots_refused"] or GUARDED in str(refused), (extern.name, refused)
            continue
        if counts is None:
            assert refused is not None and GUARDED in refused, (extern.name, refused)
            continue
        s = shown["slots"]
        assert counts == (s["tensor_inputs"], s["tensor_inputs"] + s["tensor_outputs"], s["int_inputs"],
                          s["int_inputs"] + s["int_outputs"]), extern.name
        per_argument = [a["slots"] for a in [*shown["inputs"], *shown["passed_defaults"]]]
        assert s["int_inputs"] == sum(a["count"] for a in per_argument if a["kind"] == "int")
        assert s["tensor_inputs"] == sum(a["count"] for a in per_argument if a["kind"] == "tensor")


def _passed_lengths(spec: es.ExternKernelNodes) -> tuple[tuple[int, int, int], ...] | None:
    """The calls of a torch 2.11 to 2.14 wrapper for a torch-written one-node spec (its
    OMITTED_DEFAULTS_PASSED lengths), None for a versioned spec or a node the executors refuse."""
    if spec.schema_version is not None:
        return None
    try:
        layout = node_layout(spec.nodes[0].node, layout=es.CallLayout.OMITTED_DEFAULTS_PASSED)
    except es.SpecMismatchError:
        return None
    return ((0, layout.int_inputs + layout.int_outputs, layout.tensor_inputs + layout.tensor_outputs),)


def test_torch_written_index_add_takes_the_passed_alpha(executor: Executor) -> None:
    """The issue's case, by value: torch 2.11 to 2.14's wrapper passes `alpha` in the int array, and
    both inspect (given the wrapper's call) and the executor read 2 ints from it; a versioned file's
    node reads 1."""
    for schema_version, ints in ((None, 2), (es.SCHEMA_VERSION, 1)):
        spec = index_add(schema_version)
        (shown,) = describe("spec.json", spec, call_lengths=_passed_lengths(spec))["nodes"]
        assert shown["slots"]["int_inputs"] == ints
        assert load(executor, spec)[0] == (3, 4, ints, ints)


# --- one set of kind names ----------------------------------------------------------------------

_CPP_ONLY = {"FillKind": {"SCALAR_INTS"}}  # a Scalar[] of ints: Python's dispatcher takes a plain int list
_PYTHON_ONLY = {"SlotKind": {"DEFAULT"}}  # an omitted argument: a layout's kind, not an array
_INCLUDE = Path(es.__file__).parent / "include"


def _enum_body(path: Path, name: str) -> str:
    body = re.search(r"enum class " + name + r"\b[^{]*\{(.*?)\n\};", path.read_text(encoding="utf-8"), re.S)
    assert body is not None, name
    return body.group(1)


def test_the_slot_kinds_have_the_same_names_in_both_executors() -> None:
    from externspec.abi import SlotKind

    abi_h = (Path(es.__file__).parent / "cpp/csrc/executor/abi.h").read_text(encoding="utf-8")
    body = re.search(r"enum class SlotKind \{([^}]*)\}", abi_h)
    assert body is not None
    cpp_names = {m.strip().upper() for m in body.group(1).split(",")} - {""}
    assert set(SlotKind.__members__) - _PYTHON_ONLY["SlotKind"] == cpp_names


@pytest.mark.parametrize("name", ["FillKind", "OutKind"])
def test_the_plan_kinds_are_one_table(name: str) -> None:
    """FillKind and OutKind are executor_kinds.def's: the C++ enums as the preprocessor expands
    proxy_executor.h's definitions (the enumerator's value is its position) are Python's, each name
    upper-cased with its words split, less the kinds only C++ has."""
    from externspec.abi import layout
    from tests.support.cppbuild import COMPILER

    body = _enum_body(_INCLUDE / "externspec/torch/proxy_executor.h", name)
    out = subprocess.run([COMPILER, "-E", "-P", "-x", "c++", "-I", str(_INCLUDE), "-"], input=body,
                         capture_output=True, text=True, check=True).stdout
    cpp = [n.strip() for n in out.split(",") if n.strip()]
    assert len(cpp) >= 5, out
    upper = {re.sub(r"(?<=[a-z])(?=[A-Z])", "_", n).upper(): i for i, n in enumerate(cpp)}
    python = {m.name: m.value for m in getattr(layout, name)}
    assert python == {n: i for n, i in upper.items() if n not in _CPP_ONLY.get(name, set())}
