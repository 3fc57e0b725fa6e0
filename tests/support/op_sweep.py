"""Call every ABI-compatible dispatcher op through es.ProxyExecutor with benign arrays, in worker
subprocesses, and report the ops that kill or hang a worker.

A node is written from the op's schema alone: arguments with a default are omitted (their default
is the benign value), `Tensor` is a 2x2 float tensor, optionals are None, lists have one item, ints
are 1, floats 1.0, bools False, enums the first ordinary value, devices cpu. The executor refuses
what the op policy refuses (or what `allow_ops` lets through), exactly as for a spec from a file.

    python -m tests.support.op_sweep [--allow-all]       # prints the crashing and hanging ops

Workers take many ops each and report progress one op per line before calling it, so a crash
names its op; the parent restarts a worker after the op that killed the previous one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HANG_SECONDS = 30.0


def node_for(schema: Any) -> dict[str, Any] | None:
    """The benign node for an op schema, or None when the ABI cannot carry a required argument or a
    return."""
    import externspec as es
    from externspec.abi import arg_type

    inputs = []
    for a in schema.arguments:
        if a.has_default_value():
            continue
        at = arg_type(a.real_type)
        if at.optional:
            arg: dict[str, Any] = {"as_none": True}
        elif not at.supported:
            return None
        else:
            arg = _benign(at.base, at.is_list, at.elem_optional, es)
            if arg is None:
                return None
        inputs.append({"name": a.name, "arg": arg})
    outputs = []
    for i, r in enumerate(schema.returns):
        member = arg_type(r.real_type).return_member
        if member is None:
            return None
        outputs.append({
            "as_tensor": {"as_tensor": {"name": f"o{i}"}}, "as_tensors": {"as_tensors": [{"name": f"o{i}"}]},
            "as_optional_tensor": {"as_optional_tensor": {"as_tensor": {"name": f"o{i}"}}},
            "as_int": {"as_int": 0}, "as_none": {"as_none": True}}[member])
    name = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
    return {"nodes": [{"name": "buf0", "node": {"target": name, "inputs": inputs, "outputs": outputs,
                                                 "metadata": {}}}]}


def _benign(base: str, is_list: bool, elem_optional: bool, es: Any) -> dict[str, Any] | None:
    if base == "Tensor":
        if elem_optional:
            return {"as_optional_tensors": [{"as_tensor": {"name": "t"}}]}
        return {"as_tensors": [{"name": "t"}]} if is_list else {"as_tensor": {"name": "t"}}
    scalar = {"int": ("as_int", 1), "SymInt": ("as_int", 1), "float": ("as_float", 1.0), "bool": ("as_bool", False),
              "str": ("as_string", ""), "Scalar": ("as_float", 1.0)}
    if base in scalar:
        member, value = scalar[base]
        return {member + "s": [value]} if is_list else {member: value}
    if is_list:
        return None
    return {"ScalarType": {"as_scalar_type": int(es.ScalarType.FLOAT)}, "Layout": {"as_layout": int(es.Layout.Strided)},
            "MemoryFormat": {"as_memory_format": int(es.MemoryFormat.ContiguousFormat)},
            "Device": {"as_device": {"type": "cpu", "index": None}}}.get(base)


def abi_ops() -> list[str]:
    """Every dispatcher op of a fresh `import torch` (the workers' registry, not the caller's, which
    may hold test ops) whose required arguments and returns the ABI carries."""
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run([sys.executable, "-m", "tests.support.op_sweep", "--list"], cwd=root, capture_output=True,
                         text=True, check=True)
    return list(json.loads(run.stdout))


def _list_abi_ops() -> list[str]:
    import torch

    out = []
    for name in sorted(torch._C._dispatch_get_all_op_names()):
        op, _, overload = name.partition(".")
        if node_for(torch._C._get_schema(op, overload)) is not None:
            out.append(name)
    return out


def worker(names: list[str], progress: Path, allow_all: bool) -> None:
    import warnings

    import torch

    import externspec as es
    from externspec import op_policy

    warnings.simplefilter("ignore")
    allow = list(op_policy.policy().denied) if allow_all else []
    with progress.open("a", encoding="utf-8") as log:
        for name in names:
            log.write(name + "\n")
            log.flush()
            op, _, overload = name.partition(".")
            doc = node_for(torch._C._get_schema(op, overload))
            try:
                ex = es.ProxyExecutor(es.loads(json.dumps(doc), es.ExternKernelNodes), allow_ops=allow)
                plan = ex.plans[0]
                tensors = [torch.full((2, 2), 0.5) for _ in range(plan.num_input_tensors)]
                tensors += [None] * (plan.num_tensors - plan.num_input_tensors)
                ints = [1] * plan.num_input_ints + [0] * (plan.num_ints - plan.num_input_ints)
                ex.call_function(0, ints, tensors)
            except Exception:  # the kernel refusing benign arrays is fine; only a dead worker is not
                pass
        log.write("DONE\n")


def sweep(names: list[str], allow_all: bool = False) -> dict[str, str]:
    """{op: "crash (signal N)" | "hang"} for the ops that killed or hung a worker."""
    bad: dict[str, str] = {}
    root = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory(prefix="externspec-sweep-") as tmp:
        todo = list(names)
        while todo:
            progress = Path(tmp) / f"progress-{len(bad)}.txt"
            progress.write_text("")
            cmd = [sys.executable, "-m", "tests.support.op_sweep", "--worker", str(progress)]
            if allow_all:
                cmd.append("--allow-all")
            proc = subprocess.Popen(cmd, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, text=True)
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(todo))
            proc.stdin.close()
            seen, last_change = 0, time.monotonic()
            while proc.poll() is None:
                time.sleep(0.2)
                lines = progress.read_text().splitlines()
                if len(lines) != seen:
                    seen, last_change = len(lines), time.monotonic()
                elif time.monotonic() - last_change > HANG_SECONDS:
                    proc.kill()
                    proc.wait()
            lines = progress.read_text().splitlines()
            if lines and lines[-1] == "DONE":
                break
            if not lines:
                raise RuntimeError(f"the sweep worker died before its first op (exit {proc.returncode})")
            culprit = lines[-1]
            bad[culprit] = "hang" if proc.returncode == -9 else f"crash (exit {proc.returncode})"
            todo = todo[todo.index(culprit) + 1:]
    return bad


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker", type=Path)
    parser.add_argument("--allow-all", action="store_true", help="pass every denied op in allow_ops")
    parser.add_argument("--list", action="store_true", help="print the ABI-compatible ops as JSON")
    args = parser.parse_args()
    if args.list:
        print(json.dumps(_list_abi_ops()))
        return 0
    if args.worker:
        worker(json.loads(sys.stdin.read()), args.worker, args.allow_all)
        return 0
    names = abi_ops()
    start = time.monotonic()
    bad = sweep(names, args.allow_all)
    print(f"{len(names)} ops in {time.monotonic() - start:.1f} s (cpu count {os.cpu_count()})")
    for name, what in bad.items():
        print(f"{name}: {what}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
