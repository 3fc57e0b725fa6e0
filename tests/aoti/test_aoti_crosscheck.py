"""Cross-check with torch's own AOTInductor output (torch 2.13, CPU).

For a model that calls every externspec_test custom op (support/aoti_models.py), compiled with
`aoti_compile_and_package`:
* the node SpecBuilder emits for each call equals torch's `*.wrapper.json` node, as parsed JSON,
  modulo tensor and buffer names and externspec's own `externspec.*` metadata keys;
* our flat arrays equal the ones in the generated wrapper's
  `aoti_torch_proxy_executor_call_function` call (ints by value, tensors by which input they are);
* ProxyExecutor runs torch's extern-kernel file with the wrapper's arrays and matches eager.

The one node that differs is torch's defect: it writes the enum *defaults* it fills in as
`as_int` in c10 numbering (`dtype=long` -> {"as_int": 4}), then its own loader rejects the package.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch

import externspec as es
from externspec import CallLayout, _torch_support, aoti
from tests.support import aoti_models, zoo
from tests.support.executors import Executor

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def package() -> aoti.ExternPackage:
    return aoti.read_package(aoti_models.compiled_package())


@pytest.fixture(scope="module")
def ours() -> tuple[es.ExternKernelNodes, list[es.CallSite], dict[int, str]]:
    x, y = aoti_models.example_inputs()
    b = es.SpecBuilder()
    sites = [b.add(op, args, kwargs) for op, args, kwargs in aoti_models.eager_calls(x, y)]
    return b.build(), sites, {id(x): "arg0_1", id(y): "arg1_1"}


def normalized(node: es.Node) -> dict[str, Any]:
    """A node as parsed JSON without names: tensor/buffer names become "T", externspec.* metadata
    and the node's own name are dropped."""
    doc = json.loads(es.dumps(node))

    def scrub(v: Any) -> Any:
        if isinstance(v, dict):
            if set(v) == {"name"} and isinstance(v["name"], str):
                return {"name": "T"}
            return {k: scrub(x) for k, x in v.items()}
        if isinstance(v, list):
            return [scrub(x) for x in v]
        return v

    doc["metadata"] = {k: v for k, v in doc["metadata"].items() if not k.startswith("externspec.")}
    doc.pop("name", None)
    return scrub(doc)


def matching(package: aoti.ExternPackage, target: str) -> int:
    (index,) = [i for i, n in enumerate(package.nodes.nodes) if n.node.target == target]
    return index


TARGETS = ["all_inputs", "scalars", "kwonly", "tuple_out", "list_out", "optional_out", "int_out", "mixed_out"]


@pytest.mark.parametrize("position", range(len(TARGETS)), ids=TARGETS)
def test_our_node_equals_torchs_node(package, ours, position: int) -> None:
    spec, _, _ = ours
    node = spec.nodes[position].node
    theirs = package.nodes.nodes[matching(package, node.target)].node
    assert normalized(node) == normalized(theirs)


@pytest.mark.parametrize("position", range(len(TARGETS) + 1), ids=[*TARGETS, "enum_defaults"])
def test_our_arrays_equal_the_wrapper_call(package, ours, position: int) -> None:
    spec, sites, names = ours
    site = sites[position]
    index = matching(package, spec.nodes[position].node.target)
    (call,) = [c for c in package.calls if c.index == index]
    assert list(call.int_args) == site.int_args
    inputs = [names[id(t)] for t in site.tensor_args[: len(site.tensor_args) - site.num_tensor_outputs]]
    assert list(call.tensor_names[: len(inputs)]) == inputs
    assert len(call.tensor_names) - len(inputs) == site.num_tensor_outputs


def test_torch_writes_c10_enum_defaults_that_its_loader_rejects(package, ours) -> None:
    theirs = package.nodes.nodes[matching(package, "externspec_test::enum_defaults")].node
    got = {i.name: json.loads(es.dumps(i.arg)) for i in theirs.inputs}
    assert got["dtype"] == {"as_int": 4}  # c10's Long; the file format's 4 is INT
    spec, _, _ = ours
    mine = {i.name: json.loads(es.dumps(i.arg)) for i in spec.nodes[-1].node.inputs}
    assert mine["dtype"] == {"as_scalar_type": es.ScalarType.LONG}
    with pytest.raises(RuntimeError, match="to have serialized argument type as_scalar_type for argument 1 but got "
                                           "as_int"):
        torch._inductor.aoti_load_package(str(aoti_models.compiled_package()))


def test_executor_runs_torchs_extern_file_with_the_wrapper_arrays(package) -> None:
    ex = es.ProxyExecutor(package.nodes)
    got = aoti.replay_extern_calls(package, ex.call_function, list(aoti_models.example_inputs()))
    want = aoti_models.run_eager()
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and torch.equal(g, w)
    # The c10-numbered default (4) was read as int64, not as the file format's 4 (int32).
    x, _ = aoti_models.example_inputs()
    assert not torch.equal(got[-1], aoti_models.co.enum_defaults(x, torch.int32))


def test_torch_file_has_no_version_and_reads_under_the_baseline(package) -> None:
    assert package.nodes.schema_version is None
    assert '"schema_version"' not in package.json_text


def test_torch_file_omitting_kwarg_only_defaults_runs_with_the_wrapper_arrays(executor: Executor) -> None:
    """torch omits kwarg-only defaults from its JSON; up to 2.14 it passes them in the wrapper's int
    array (its own runner then fails), from 2.15 it does not. Both executors lay the file out as the
    wrapper's calls say (docs/torch-compat.md, "The call layout") and read the values from the arrays;
    a versioned file stays strict."""
    path = aoti_models.compiled_package(aoti_models.KwOnlyFixed)
    package = aoti.read_package(path)
    (node,) = package.nodes.nodes
    assert [i.name for i in node.node.inputs] == ["x", "p"]  # every kwarg-only default omitted
    (call,) = package.calls
    passed = _torch_support.minor_release(torch.__version__) < (2, 15)
    assert list(call.int_args) == ([5, 3, 4] if passed else [5])  # up to 2.14 the int ones (k, s) too
    x, y = aoti_models.example_inputs()
    zoo.assert_torchs_runner_as_its_release_does(path, (x, y), aoti_models.KwOnlyFixed()(x, y))
    co = aoti_models.co
    ex = executor(package.nodes, call_lengths=package.call_lengths)
    assert ex.call_layout == (CallLayout.OMITTED_DEFAULTS_PASSED if passed else CallLayout.NODE_ARGUMENTS)
    slots = [x, None]
    ex.call_function(0, list(call.int_args), slots)
    assert torch.equal(slots[1], co.kwonly_fixed(x, 5))
    ex = executor(package.nodes, call_layout="OMITTED_DEFAULTS_PASSED")
    slots = [x, None]
    ex.call_function(0, [5, 7, 9], slots)  # read from the arrays, not re-filled from the schema
    assert torch.equal(slots[1], co.kwonly_fixed(x, 5, k=7, s=9))
    with pytest.raises(es.CallError, match=r"expected 1 input \+ 1 output tensor slots and 3 input \+ 0 int-return "
                                           "slots, got 2 tensors and 1 ints"):
        ex.call_function(0, [5], [x, None])
    # The same node in an externspec-written (versioned) file: an omitted argument takes no slot.
    versioned = executor(package.nodes.model_copy(update={"schema_version": es.SCHEMA_VERSION}))
    slots = [x, None]
    versioned.call_function(0, [5], slots)
    assert torch.equal(slots[1], co.kwonly_fixed(x, 5))
    with pytest.raises(es.CallError, match="1 input \\+ 0 int-return slots, got 2 tensors and 3 ints"):
        versioned.call_function(0, [5, 3, 4], [x, None])
    # Ours, for the same call: every argument written, arrays consistent.
    b = es.SpecBuilder()
    site = b.add(co.kwonly_fixed, (x, 5))
    assert site.int_args == [5, 3, 4]
    slots = list(site.tensor_args)
    executor(es.loads(es.dumps(b.build()), es.ExternKernelNodes)).call_function(0, site.int_args, slots)
    assert torch.equal(slots[1], co.kwonly_fixed(x, 5))
