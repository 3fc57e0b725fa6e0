"""Guard, don't only deny (issue 36, item 14): ops whose kernels crash on ints they do not check are
checked at each call (op_policy.def's ES_CHECK) and stay usable without `allow_ops`.

* torch's own OpInfo samples of the FFT ops (`fft.*` in op_db, every sample: 164 calls of
  `_fft_r2c`, `_fft_c2r` and `_fft_c2c`) run through both executors with no `allow_ops`, equal to
  eager; before, `_fft_r2c` was denied at load.
* The ints that crashed those kernels (the hostile-int sweep's cases, tests/abi/test_op_policy.py,
  and the same dims given to `_fft_c2r` / `_fft_c2c` with complex inputs, which that sweep's real
  inputs do not reach) are a CallError naming the node, the op and the argument in both
  executors, in a subprocess, since without the check they kill the process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from typing import Any

import pytest
import torch

import externspec as es
from externspec.abi import arg_type, op_policy
from tests.support import opinfo_replay, paths
from tests.support.executors import Executor

FFT_OPS = ("aten::_fft_r2c", "aten::_fft_c2r", "aten::_fft_c2c")


@pytest.fixture(scope="module")
def fft_calls() -> list[opinfo_replay.Captured]:
    """Every sample of every `fft.*` OpInfo, float32, and the FFT kernels' calls they make."""
    common = pytest.importorskip("torch.testing._internal.common_methods_invocations")
    infos = sorted((o for o in common.op_db if o.name.startswith("fft.")), key=lambda o: (o.name, o.variant_test_name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's own deprecation warnings in its samples
        _, calls = opinfo_replay.capture(infos, samples_per_op=10**6, calls_per_sample=64)
    return [c for c in calls if c.op.name() in FFT_OPS]


def test_opinfo_fft_samples_run_unallowed_equal_to_eager(fft_calls: list[opinfo_replay.Captured],
                                                          executor: Executor) -> None:
    assert {c.op.name() for c in fft_calls} == set(FFT_OPS) and len(fft_calls) >= 150
    report = opinfo_replay.Report()
    for call in fft_calls:
        opinfo_replay.check_call(call, executor, report)
    assert report.errors == [] and report.mismatches == [] and report.unsupported == {}
    assert report.passed == report.calls == len(fft_calls)


def _node(target: str, inputs: dict[str, Any]) -> dict[str, Any]:
    return {"nodes": [{"name": "buf0", "node": {
        "target": target, "inputs": [{"name": k, "arg": v} for k, v in inputs.items()],
        "outputs": [{"as_tensor": {"name": "out"}}], "metadata": {}}}]}


def _t(name: str) -> dict[str, Any]:
    return {"as_tensor": {"name": name}}


def _ints(n: int) -> dict[str, Any]:
    return {"as_ints": [0] * n}


def _fft(target: str, last: str, n: int) -> dict[str, Any]:
    last_arg = {"as_int": 0} if last == "last_dim_size" else {"as_bool": True}
    return _node(target, {"self": _t("x"), "dim": _ints(n), "normalization": {"as_int": 0}, last: last_arg})


R2C, C2R, C2C = (_fft("aten::_fft_r2c", "onesided", 1), _fft("aten::_fft_c2r", "last_dim_size", 1),
                 _fft("aten::_fft_c2c", "forward", 1))
REMOVE_BATCH_DIM = _node("aten::_remove_batch_dim", {"self": _t("x"), "level": {"as_int": 1},
                                                     "batch_size": {"as_int": 1}, "out_dim": {"as_int": 0}})
NEW_ZEROS = _node("aten::_new_zeros_with_same_feature_meta", {"self": _t("x"), "other": _t("y"),
                                                               "self_num_batch_dims": {"as_int": 0}})
REAL, COMPLEX = "real", "complex"  # a 2x3 input of that kind

# (spec, the tensors' kinds, the int array, the refusal after "refused by the executor's op policy: ").
# Without the checks, _fft_r2c and _fft_c2r with dim 4096 overflowed the stack, _remove_batch_dim
# and _new_zeros_with_same_feature_meta read or wrote past a size vector (SIGSEGV), and the other
# values were read as they came: the FFT kernels take dims torch.fft has already wrapped, so -1
# reads before the input's sizes and [1, 1] transforms dim 1 twice; an fft_norm_mode of 5.
HOSTILE: dict[str, tuple[dict[str, Any], tuple[str, ...], list[int], str]] = {
    "r2c_dim_past_rank": (R2C, (REAL,), [4096, 0], "argument `dim` is [4096]: 4096 is not a dim of `self` (0..1)"),
    "r2c_dim_negative": (R2C, (REAL,), [-1, 0], "argument `dim` is [-1]: -1 is not a dim of `self` (0..1)"),
    "r2c_repeated_dim": (_fft("aten::_fft_r2c", "onesided", 2), (REAL,), [1, 1, 0],
                         "argument `dim` is [1, 1]: dim 1 is given twice"),
    "r2c_normalization": (R2C, (REAL,), [1, 5], "argument `normalization` is 5: 5 is not in 0..2"),
    "c2r_dim_past_rank": (C2R, (COMPLEX,), [4096, 0, 4], "argument `dim` is [4096]: 4096 is not a dim of `self` "
                          "(0..1)"),
    "c2r_normalization": (C2R, (COMPLEX,), [1, -1, 4], "argument `normalization` is -1: -1 is not in 0..2"),
    "c2c_dim_past_rank": (C2C, (COMPLEX,), [2**62, 0], f"argument `dim` is [{2**62}]: {2**62} is not a dim of "
                          "`self` (0..1)"),
    "remove_batch_dim_negative": (REMOVE_BATCH_DIM, (REAL,), [1, 1, -3], "argument `out_dim` is -3: -3 is not in "
                                  "0..2 (`self` has 2 dims)"),
    "remove_batch_dim_past_rank": (REMOVE_BATCH_DIM, (REAL,), [1, 1, 4096], "argument `out_dim` is 4096: 4096 is "
                                   "not in 0..2 (`self` has 2 dims)"),
    "new_zeros_past_rank": (NEW_ZEROS, (REAL, REAL), [4096], "argument `self_num_batch_dims` is 4096: 4096 is not "
                            "in 0..2 (`self` has 2 dims)"),
    "new_zeros_negative": (NEW_ZEROS, (REAL, REAL), [-1], "argument `self_num_batch_dims` is -1: -1 is not in "
                           "0..2 (`self` has 2 dims)"),
}

# Runs each case in one process (a crash would end it, not the test run) and prints one JSON line
# per case: the error's class, node and message, or "ran".
_CHILD = """
import json, sys, torch
import externspec as es
kind, cases = sys.argv[1], json.loads(sys.stdin.read())
make = es.ProxyExecutor if kind == "python" else es.cpp.ProxyExecutor
for name, (doc, tensors, ints) in cases.items():
    ex = make(json.dumps(doc))
    args = [torch.randn(2, 3, dtype=torch.complex64 if t == "complex" else torch.float32) for t in tensors]
    try:
        ex.call_function(0, ints, args + [None])
        print(json.dumps([name, "ran", None, ""]), flush=True)
    except es.ExternSpecError as exc:
        print(json.dumps([name, type(exc).__name__, exc.node, str(exc)]), flush=True)
"""


def test_crashing_ints_are_a_call_error_naming_node_op_and_argument(executor: Executor) -> None:
    cases = {name: (doc, tensors, ints) for name, (doc, tensors, ints, _) in HOSTILE.items()}
    run = subprocess.run([sys.executable, "-c", _CHILD, executor.kind], input=json.dumps(cases), cwd=paths.REPO,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    got = {name: (kind, node, message) for name, kind, node, message in map(json.loads, run.stdout.splitlines())}
    for name, (doc, _, _, refusal) in HOSTILE.items():
        target = doc["nodes"][0]["node"]["target"]
        check = next(c for c in op_policy.checks(target + ".default") if refusal.startswith(f"argument `{c.arg}`"))
        want = f"node 0 `buf0` ({target}): refused by the executor's op policy: {refusal} (the kernel {check.reason})"
        assert got[name] == ("CallError", 0, want), name


def test_checked_ops_are_not_denied_and_name_their_arguments() -> None:
    """Every ES_CHECK names an int argument (and a tensor) of each registered op it covers, and the
    op it covers runs unallowed: checked, not denied."""
    checks = op_policy.policy().checks
    assert {c.op for c in checks} >= {*FFT_OPS, "aten::_remove_batch_dim", "aten::_new_zeros_with_same_feature_meta"}
    for check in checks:
        ns, _, name = check.op.partition("::")
        packet = getattr(getattr(torch.ops, ns), name)
        for overload in packet.overloads():
            qualified = f"{check.op}.{overload}"
            assert op_policy.denial(qualified, ()) is None, qualified
            types = {a.name: arg_type(a.real_type) for a in getattr(packet, overload)._schema.arguments}
            assert types[check.arg].base in ("int", "SymInt"), (qualified, check.arg)
            assert check.tensor == "" or str(types[check.tensor]) == "Tensor", (qualified, check.tensor)


def test_a_check_passes_a_valid_call(executor: Executor) -> None:
    """The checks refuse only what breaks them: every dim of the input, the last normalization."""
    ex = executor(es.loads(json.dumps(_fft("aten::_fft_r2c", "onesided", 2)), es.ExternKernelNodes))
    x = torch.randn(4, 6)
    slots: list[Any] = [x, None]
    ex.call_function(0, [1, 0, 2], slots)
    assert torch.equal(slots[1], torch.ops.aten._fft_r2c(x, [1, 0], 2, True))
