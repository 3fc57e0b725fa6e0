"""One grammar of node targets, checked over the Python parser (`abi.split_target`, used by the
Python executor, `inspect` and `op_namespaces`) and the C++ executor's own (`split_target` in
cpp/csrc/executor/ops.cpp) with the same targets: the good ones name aten::relu, the bad ones load nothing."""

from __future__ import annotations

import json

import pytest

import externspec as es
from externspec.abi import OpName, split_target
from externspec.abi.layout import node_layout
from externspec.abi.ops import op_namespaces
from tests.support.executors import Executor, slot_counts

RELU = OpName("aten", "relu", "default")
GOOD = [
    ("torch.ops.aten.relu.default", RELU),  # exported programs' spelling
    ("aten::relu.default", RELU),
    ("aten::relu", RELU),
]
BAD = [
    "relu", "aten:relu", "aten::", "::relu", "aten::relu.", "aten::re lu", "aten::relu\n", "1aten::relu",
    "aten::relu.default.x", "aten::a::relu", "os.system", "__import__('os')::x",
    "aten::__class__", "__builtins__::relu", "aten::relu.__init__",
    "torch.ops.aten.relu", "torch.ops.aten.relu.default.x", "torch.ops..relu.default", "torch.ops.aten.__dict__.x",
]


def relu_spec(target: str) -> es.ExternKernelNodes:
    doc = {"nodes": [{"name": "buf0", "node": {
        "target": target, "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}}],
        "outputs": [{"as_tensor": {"name": "y"}}], "metadata": {}}}]}
    return es.loads(json.dumps(doc), es.ExternKernelNodes)


@pytest.mark.parametrize("target", [t for t, _ in GOOD] + BAD)
def test_one_grammar_of_targets(target: str, executor: Executor) -> None:
    parts = dict(GOOD).get(target)
    spec = relu_spec(target)
    node = spec.nodes[0].node
    if parts is None:
        form = f"`{target}` is not of the form ns::op or ns::op.overload"
        with pytest.raises(ValueError, match="is not of the form"):
            split_target(target)
        with pytest.raises(es.SpecMismatchError) as info:
            executor(spec)
        assert str(info.value) == f"node 0 `buf0` ({target}): {form}"
        with pytest.raises(es.SpecMismatchError) as info:
            node_layout(node, layout=es.CallLayout.NODE_ARGUMENTS)
        assert str(info.value) == f"node 0 ({target}): {form}"
        assert op_namespaces([node]) == {}
        return
    assert split_target(target) == parts
    assert slot_counts(executor(spec), 0) == (1, 2, 0, 0)
    assert node_layout(node, layout=es.CallLayout.NODE_ARGUMENTS).tensor_inputs == 1
    assert op_namespaces([node]) == {"aten": True}
