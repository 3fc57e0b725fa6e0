"""Torch-written files (no `schema_version`) under the baseline rules of docs/torch-compat.md, on
hand-written nodes, for both executors (the packages torch compiles are in test_lite_zoo.py and
test_aoti_crosscheck.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch

import externspec as es
from tests.support.executors import Executor


def _node(target: str, inputs: dict[str, dict[str, Any]], outputs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": "buf0", "node": {
        "target": target, "outputs": outputs, "metadata": {},
        "inputs": [{"name": k, "arg": v, "kind": 1} for k, v in inputs.items()]}}


def _spec(*nodes: dict[str, Any], versioned: bool = False) -> es.ExternKernelNodes:
    doc: dict[str, Any] = {"nodes": list(nodes)}
    if versioned:
        doc["schema_version"] = {"major": es.SCHEMA_VERSION.major, "minor": es.SCHEMA_VERSION.minor}
    return es.loads(json.dumps(doc), es.ExternKernelNodes)


ADDMM = _node("aten::addmm", {"self": {"as_tensor": {"name": "b"}}, "mat1": {"as_tensor": {"name": "x"}},
                              "mat2": {"as_tensor": {"name": "w"}}}, [{"as_tensor": {"name": "buf1"}}])


def test_addmm_without_beta_alpha_reads_them_from_the_int_array(executor: Executor) -> None:
    b, x, w = torch.randn(3), torch.randn(2, 4), torch.randn(4, 3)
    ex = executor(_spec(ADDMM))
    for beta, alpha in [(1, 1), (2, 3)]:
        slots = [b, x, w, None]
        ex.call_function(0, [beta, alpha], slots)
        torch.testing.assert_close(slots[3], torch.addmm(b, x, w, beta=beta, alpha=alpha))
    # The first call decided OMITTED_DEFAULTS_PASSED (docs/torch-compat.md, "The call layout"); a call
    # in the other layout is refused naming both, and with the option that layout is the only one.
    with pytest.raises(es.CallError, match=r"got 4 tensors and 0 ints, its NODE_ARGUMENTS layout, but this package's "
                                           r"calls are laid out OMITTED_DEFAULTS_PASSED"):
        ex.call_function(0, [], [b, x, w, None])
    with pytest.raises(es.CallError, match=r"3 input \+ 1 output tensor slots and 2 input \+ 0 int-return slots, "
                                           "got 4 tensors and 0 ints"):
        executor(_spec(ADDMM), call_layout="OMITTED_DEFAULTS_PASSED").call_function(0, [], [b, x, w, None])


def test_versioned_addmm_without_beta_alpha_takes_no_int_slots(executor: Executor) -> None:
    b, x, w = torch.randn(3), torch.randn(2, 4), torch.randn(4, 3)
    ex = executor(_spec(ADDMM, versioned=True))
    slots = [b, x, w, None]
    ex.call_function(0, [], slots)
    torch.testing.assert_close(slots[3], torch.addmm(b, x, w))
    with pytest.raises(es.CallError, match="got 4 tensors and 2 ints"):
        ex.call_function(0, [1, 1], [b, x, w, None])


@pytest.mark.parametrize(("target", "returns"), [("aten::is_nonzero", "bool"), ("aten::_local_scalar_dense", "Scalar")])
def test_returns_the_abi_cannot_carry_are_refused_at_load_naming_the_op(executor: Executor, target: str,
                                                                       returns: str) -> None:
    spec = _spec(_node(target, {"self": {"as_tensor": {"name": "x"}}}, [{"as_none": True}]))
    with pytest.raises(es.SpecMismatchError, match=rf"node 0 `buf0` \({target}\): return 0 has runtime type "
                                                   rf"`{returns}`, which the ABI cannot return"):
        executor(spec)
