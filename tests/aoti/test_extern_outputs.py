"""Extern-call outputs checked against what the compiled code expects (issue 36 item 5), one body
over both executors: the package's own C++ executor (`run_flat`) and the Python executor driven by
the compiled wrapper (`run_flat_with`), both behind the runner's check.

The hostile packages are a default-mode one whose `*.wrapper.json` alone is edited so that its
extern call is an allowed op returning what the fused kernel after the call does not expect
(`cm.extern_output_edited`): a 0-D tensor (the kernel wrote a 2048x2048 result into a 4-byte
allocation: SIGSEGV, exit -11 in both executors before the check), a bool tensor of the recorded
shape (the kernel wrote 16 MiB of float32 into 4 MiB: SIGABRT or SIGSEGV), a view of the caller's
input (the kernel wrote its result into the caller's tensor). Each runs in a subprocess, so a
crash is a failed test, not a dead test worker. The wrapper's output records are bounded: one per
call output, at the attack's size (a 60 MiB source of repeated 1,024-dim records).

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
from tests.support.artifacts import read_member, replace_member
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


# What each edit's CallError says the output is, against what the compiled code expects.
_WHY = {
    "0-D": "has shape [], the compiled code expects [2048, 2048]",
    "bool": "has dtype Bool, the compiled code expects Float",
    "alias": "shares storage with input tensor slot 0, where the op the package was compiled for returns a new tensor",
}


@pytest.mark.parametrize("edit", sorted(_WHY))
def test_an_output_the_code_would_misuse_is_a_call_error_naming_node_op_output_and_both_values(
        executor: Executor, tmp_path: Path, edit: str) -> None:
    hostile = cm.extern_output_edited(edit, tmp_path / "edited.pt2")
    spec = tmp_path / "nodes.json"
    spec.write_bytes(read_member(hostile, ".wrapper.json"))
    done = subprocess.run([sys.executable, "-c", _RUN, str(hostile), executor.kind, str(spec)],
                          capture_output=True, text=True, timeout=600, cwd=Path(__file__).parents[2])
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    error = json.loads(done.stdout.strip().splitlines()[-1])
    assert error["error"] == "CallError" and error["node"] == 0, error
    target = cm.EXTERN_OUTPUT_EDITS[edit][0]
    assert re.match(rf"node 0 `buf\d+` \({re.escape(target.split('.')[0])}", error["message"]), error
    assert "output `buf" in error["message"]
    assert _WHY[edit] in error["message"]


def test_the_caller_input_is_untouched_when_an_output_aliases_it(tmp_path: Path) -> None:
    runner = es.cpp.AOTIRunner(cm.extern_output_edited("alias", tmp_path / "alias.pt2"))
    (x,) = MODEL.inputs(0)
    before = x.clone()
    with pytest.raises(es.CallError, match="shares storage with input tensor slot 0"):
        runner.run_flat([x])
    assert torch.equal(x, before)


# A 60 MiB source: after the extern call's own record of its output, the same record again with
# 1,024 dimensions, line after line (issue 45 item 2: +2681 MiB at load, 45x the source).
_REPEATS_BYTES = 60 << 20


def _repeated_records(source: str) -> str:
    call = source.index("aoti_torch_proxy_executor_call_function(")
    record = re.compile(r"assert_size_stride\((buf\d+), .*?\n").search(source, call)
    assert record is not None
    wide = "{" + ", ".join(["1L"] * 1024) + "}"
    line = f"    assert_size_stride({record.group(1)}, {wide}, {wide}, \"torch.ops.es_test.floats.default\");\n"
    return source[:record.end()] + line * (_REPEATS_BYTES // len(line)) + source[record.end():]


_LOAD_PEAK = """
import json, resource, sys
import externspec as es
from tests.support import cpp_models
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    es.cpp.AOTIRunner(sys.argv[1])
    error = None
except es.ExternSpecError as e:
    error = {"error": type(e).__name__, "message": str(e)}
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"error": error, "peak_growth_kib": after - before}))
"""


def test_output_records_are_one_per_call_output_a_repeat_refused_with_its_line(tmp_path: Path) -> None:
    package = cm.package("extern_output")
    source = _repeated_records(read_member(package, ".wrapper.cpp").decode())
    hostile = replace_member(package, ".wrapper.cpp", source.encode(), tmp_path / "repeated.pt2")
    done = subprocess.run([sys.executable, "-c", _LOAD_PEAK, str(hostile)], capture_output=True, text=True,
                          timeout=600, cwd=Path(__file__).parents[2])
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["error"]["error"] == "PackageError", result
    assert re.search(r"\.wrapper\.cpp: line \d+ records `buf\d+` a second time after extern call 0",
                     result["error"]["message"])
    # What the load held beyond the source itself (read whole, within max_source_bytes): a few MiB
    # (the attack's records cost 45 times the source).
    assert result["peak_growth_kib"] * 1024 < 2 * len(source), result
