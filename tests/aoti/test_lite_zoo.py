"""Whole models in AOTInductor lite mode (tests/support/zoo.py), where most of each model runs as
extern calls of a torch-written file: both executors run every model as the compiled wrapper
calls them, equal to eager, at a second input size where the model has a dynamic dimension.

The Python executor is driven by the compiled wrapper itself (`AOTIRunner.run_flat_with`): these
wrappers read weights and run C-shim kernels between the extern calls, so the calls cannot be
replayed from the wrapper text alone, and dynamic sizes are only known at run time.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.utils import _pytree as pytree

import externspec as es
from tests.support import zoo
from tests.support.artifacts import read_member

pytestmark = [
    pytest.mark.slow,
    # torch.export's own warning about nn.GRU's flat weights, raised from contextlib while exporting
    pytest.mark.filterwarnings("ignore:The tensor attributes self.gru._flat_weights:UserWarning"),
]


@pytest.fixture(scope="module", params=list(zoo.ZOO))
def compiled(request: pytest.FixtureRequest) -> tuple[zoo.ZooModel, es.ExternKernelNodes, Any]:
    path = zoo.lite_package(request.param)
    nodes = es.loads(read_member(path, ".wrapper.json"), es.ExternKernelNodes)
    return zoo.ZOO[request.param], nodes, es.cpp.AOTIRunner(path)


def _run(kind: str, nodes: es.ExternKernelNodes, runner: Any, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    if kind == "cpp":
        return runner.run_flat(inputs)
    return runner.run_flat_with(es.ProxyExecutor(nodes).call_function, inputs)


@pytest.mark.parametrize("kind", ["python", "cpp"])
def test_lite_model_runs_through_the_executor_equal_to_eager(compiled, kind: str) -> None:
    model, nodes, runner = compiled
    assert nodes.schema_version is None and len(nodes.nodes) > 0  # torch-written, with extern calls
    module = model.module()
    for variant in (0, 1) if model.dynamic else (0,):
        inputs = model.inputs(variant)
        with torch.no_grad():
            want = pytree.tree_leaves(module(*inputs))
        got = _run(kind, nodes, runner, list(inputs))
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)  # also checks shape and dtype


def test_dynamic_model_changes_size_and_torchs_runner_fails_on_addmm_up_to_2_14() -> None:
    """The MLP is compiled with a dynamic batch; torch's own runner up to 2.14 cannot run it (addmm's
    kwarg-only beta/alpha are in its arrays but not in its file; 2.15's passes neither and runs it),
    externspec's can."""
    model = zoo.ZOO["mlp"]
    path = zoo.lite_package("mlp")
    assert model.dynamic and model.inputs(0)[0].shape[0] != model.inputs(1)[0].shape[0]
    targets = {n.node.target for n in es.loads(read_member(path, ".wrapper.json"), es.ExternKernelNodes).nodes}
    assert "aten::addmm" in targets
    with torch.no_grad():
        want = model.module()(*model.inputs(1))
    zoo.assert_torchs_runner_as_its_release_does(path, model.inputs(1), want)


def test_python_executor_error_reaches_the_caller_through_the_compiled_model() -> None:
    runner = es.cpp.AOTIRunner(zoo.lite_package("mlp"))

    def call_function(index: int, int_args: list[int], tensor_args: list[Any]) -> None:
        raise es.CallError(f"refused call {index} with {len(tensor_args)} tensors")

    with pytest.raises(es.CallError, match=r"refused call 0 with \d+ tensors"):
        runner.run_flat_with(call_function, list(zoo.ZOO["mlp"].inputs(0)))
