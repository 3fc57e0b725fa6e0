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


# Two 60 MiB sources (issue 45 item 2): after the extern call's own record of its output, the same
# record again with 1,024 dimensions, line after line (+2681 MiB at load, 45x the source, before);
# and the call again and again, each time into a new buffer recorded with 1,024 dimensions (one
# record per output: 7,168 outputs of 1,024 dimensions in a 56 MiB source cost +1068 MiB before
# the total bound).
_SOURCE_BYTES = 60 << 20
_WIDE = "{" + ", ".join(["1L"] * 1024) + "}"


def _record(buffer: str) -> str:
    return f"    assert_size_stride({buffer}, {_WIDE}, {_WIDE}, \"torch.ops.es_test.floats.default\");\n"


def _repeated_records(source: str, at: int, buffer: str) -> str:
    line = _record(buffer)
    return source[:at] + line * (_SOURCE_BYTES // len(line)) + source[at:]


def _many_outputs(source: str, at: int, buffer: str) -> str:
    start = source.rindex("\n", 0, source.index("aoti_torch_proxy_executor_call_function(")) + 1
    call = source[start:source.index("\n", start) + 1]  # the call as the wrapper states it (lengths and all)
    blocks: list[str] = []
    while True:
        name = f"extra{len(blocks)}"
        block = call.replace(buffer, name) + _record(name)
        if len(block) * (len(blocks) + 1) > _SOURCE_BYTES:
            return source[:at] + "".join(blocks) + source[at:]
        blocks.append(block)


def _reuses(source: str, at: int, buffer: str) -> str:
    lines = "".join(f"    auto reuse{k} = std::move({buffer});  // reuse\n" for k in range(70_000))
    return source[:at] + lines + source[at:]


_ATTACKS = {
    "reuses": (_reuses, r"line \d+ reuses recorded buffers more than 65536 times"),
    "repeated": (_repeated_records, r"line \d+ records `buf\d+` a second time after extern call 0"),
    "many outputs": (_many_outputs, r"line \d+ takes the extern outputs' records past 1048576 dimensions in all"),
}


# The load's peak resident memory over what the process held before it: VmHWM, reset before the
# load (Linux's clear_refs 5), so the peak of importing torch does not hide the load's.
_LOAD_PEAK = """
import json, re, sys
import externspec as es
from tests.support import cpp_models

def kib(field):
    return int(re.search(field + r":\\s+(\\d+) kB", open("/proc/self/status").read()).group(1))

open("/proc/self/clear_refs", "w").write("5")
before = kib("VmRSS")
try:
    es.cpp.AOTIRunner(sys.argv[1])
    error = None
except es.ExternSpecError as e:
    error = {"error": type(e).__name__, "message": str(e)}
print(json.dumps({"error": error, "peak_growth_kib": kib("VmHWM") - before}))
"""


@pytest.mark.parametrize("attack", sorted(_ATTACKS))
def test_output_records_are_bounded_in_total(tmp_path: Path, attack: str) -> None:
    package = cm.package("extern_output")
    source = read_member(package, ".wrapper.cpp").decode()
    record = re.compile(r"assert_size_stride\((buf\d+), .*?\n").search(
        source, source.index("aoti_torch_proxy_executor_call_function("))
    assert record is not None
    edit, refusal = _ATTACKS[attack]
    source = edit(source, record.end(), record.group(1))
    hostile = replace_member(package, ".wrapper.cpp", source.encode(), tmp_path / "records.pt2")
    done = subprocess.run([sys.executable, "-c", _LOAD_PEAK, str(hostile)], capture_output=True, text=True,
                          timeout=600, cwd=Path(__file__).parents[2])
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["error"]["error"] == "PackageError", result
    assert re.search(r"\.wrapper\.cpp: " + refusal, result["error"]["message"]), result
    # The load's peak over the source itself (read whole, within max_source_bytes): the records
    # stay under the total bound (about 75 MB).
    assert result["peak_growth_kib"] * 1024 < len(source) + (100 << 20), result


def test_a_line_of_many_pointer_reads_is_read_in_one_pass(tmp_path: Path) -> None:
    """Each `.data_ptr())` is looked at with the bytes just before it: a 60 MiB line of them (no cast
    among them) made the reader scan back to the line's start at each one."""
    package = cm.package("extern_output")
    source = read_member(package, ".wrapper.cpp").decode()
    at = source.index("\n", source.index("assert_size_stride(", source.index("aoti_torch_proxy_executor_call_"))) + 1
    source = source[:at] + "    // " + "x.data_ptr())" * (_SOURCE_BYTES // 13) + "\n" + source[at:]
    hostile = replace_member(package, ".wrapper.cpp", source.encode(), tmp_path / "pointers.pt2")
    done = subprocess.run([sys.executable, "-c", _LOAD_PEAK, str(hostile)], capture_output=True, text=True,
                          timeout=300, cwd=Path(__file__).parents[2])
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert json.loads(done.stdout.strip().splitlines()[-1])["error"] is None
