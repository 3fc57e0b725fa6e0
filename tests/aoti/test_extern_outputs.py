"""Extern-call outputs checked against what the compiled code expects (issue 36 item 5), one body
over both executors: the package's own C++ executor (`run_flat`) and the Python executor driven by
the compiled wrapper (`run_flat_with`), both behind the runner's check.

The hostile package is a default-mode one whose `*.wrapper.json` alone is edited so that its extern
call is an allowed op returning a 0-D tensor (`cm.extern_output_returning_0d`): the fused kernel
after the call then wrote a 2048x2048 result into a 4-byte allocation (SIGSEGV, exit -11 in both
executors before the check). It runs in a subprocess, so a crash is a failed test, not a dead
test worker.

Slow: compiles one small model (cached)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import externspec as es
from tests.support import cpp_models as cm
from tests.support.artifacts import read_member
from tests.support.executors import Executor

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("extraction_root")]

MODEL = cm.MODELS["extern_output"]

# Runs the package at argv[1] with executor argv[2] ("python" or "cpp") and prints the error it
# raised as JSON: its class, its node and its message.
_RUN = """
import json, sys
import torch
import externspec as es
from tests.support import cpp_models as cm

runner = es.cpp.AOTIRunner(sys.argv[1])
inputs = list(cm.MODELS["extern_output"].inputs(0))
try:
    if sys.argv[2] == "cpp":
        runner.run_flat(inputs)
    else:
        nodes = es.loads(open(sys.argv[3], "rb").read(), es.ExternKernelNodes)
        runner.run_flat_with(es.ProxyExecutor(nodes).call_function, inputs)
except es.ExternSpecError as e:
    print(json.dumps({"error": type(e).__name__, "node": e.node, "message": str(e)}))
"""


def _run(kind: str, package: Path) -> list[torch.Tensor]:
    if kind == "cpp":
        return es.cpp.AOTIRunner(package).run_flat(list(MODEL.inputs(0)))
    nodes = es.loads(read_member(package, ".wrapper.json"), es.ExternKernelNodes)
    return es.cpp.AOTIRunner(package).run_flat_with(es.ProxyExecutor(nodes).call_function, list(MODEL.inputs(0)))


def test_the_wrapper_records_the_extern_output_it_checks() -> None:
    source = read_member(cm.package("extern_output"), ".wrapper.cpp").decode()
    assert "aoti_torch_proxy_executor_call_function(" in source
    # the rows as the input's size symbol, which the check binds from the input as the input checks do
    assert re.search(r"assert_size_stride\(buf\d+, \{s\d+, 2048L\}, \{2048L, 1L\}", source)


def test_outputs_as_recorded_pass_both_executors(executor: Executor) -> None:
    package = cm.package("extern_output")
    (got,) = _run(executor.kind, package)
    torch.testing.assert_close(got, MODEL.module(*MODEL.inputs(0)))


def test_an_output_of_another_shape_is_a_call_error_naming_node_output_and_shapes(
        executor: Executor, tmp_path: Path) -> None:
    hostile = cm.extern_output_returning_0d(tmp_path / "zero_d.pt2")
    spec = tmp_path / "nodes.json"
    spec.write_bytes(read_member(hostile, ".wrapper.json"))
    done = subprocess.run([sys.executable, "-c", _RUN, str(hostile), executor.kind, str(spec)],
                          capture_output=True, text=True, timeout=600, cwd=Path(__file__).parents[2])
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    error = json.loads(done.stdout.strip().splitlines()[-1])
    assert error["error"] == "CallError" and error["node"] == 0
    assert "node 0" in error["message"] and "(aten::einsum)" in error["message"]
    assert "output `buf" in error["message"]
    assert "has shape [], the compiled code expects [2048, 2048]" in error["message"]
