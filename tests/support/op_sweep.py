"""Call every ABI-compatible dispatcher op through es.ProxyExecutor, in worker subprocesses, and
report the calls that kill or hang a worker.

A node is written from the op's schema alone: arguments with a default are omitted (their default
is the benign value), `Tensor` is a 2x2 float tensor, optionals are None, lists have one item, ints
are 1, floats 1.0, bools False, enums the first ordinary value, devices cpu. The executor refuses
what the op policy refuses (or what `allow_ops` lets through), exactly as for a spec from a file.

A case is an op and, for the hostile sweep, one of its int / int[] / SymInt arguments (given even
when it has a default), or `*` for all of them at once, and a hostile value: every int slot of
those arguments carries the value at call time (ints always travel in the caller's array), every
other int is 1. Each hostile case runs over 2-D tensors (2x2) and again over 4-D ones (1x2x3x3),
which reach the convolution and pooling kernels the 2-D ones are refused by.

    python -m tests.support.op_sweep [--hostile] [--allow-all]   # prints the crashing and hanging calls

Workers take many cases each and report progress one case per line before calling it, so a crash
names its case; the parent restarts a worker after the case that killed the previous one. Two
chains of workers run side by side; each worker uses one thread, and its address space is capped
(HEADROOM above what importing torch maps) so that a huge size fails to allocate instead of
taking the machine's memory.
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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from externspec.abi.layout import NodeLayout

HANG_SECONDS = 30.0
HOSTILE_INTS = (0, -1, -3, 4096, 2**20, 2**31, 2**62)
HEADROOM = 4 << 30
JOBS = 2

Case = tuple[str, str, int, int]  # (op, int argument or "*", value, tensor rank)
ALL = "*"
SHAPES = {2: (2, 2), 4: (1, 2, 3, 3)}  # the tensors of a case, by rank


def benign(op: str) -> Case:
    return (op, "", 0, 2)


def label(case: Case) -> str:
    op, arg, value, rank = case
    return f"{op} {arg}={value} ({rank}-D tensors)" if arg else op


def int_arguments(schema: Any) -> list[str]:
    """The arguments of type int, int[], SymInt or SymInt[] (optional or not) the ABI carries."""
    from externspec.abi import arg_type

    out = []
    for a in schema.arguments:
        at = arg_type(a.real_type)
        if at.base in ("int", "SymInt") and not at.elem_optional and at.supported:
            out.append(a.name)
    return out


def node_for(schema: Any, given: str = "") -> dict[str, Any] | None:
    """The benign node for an op schema (with argument `given`, or every int argument for ALL,
    written even when it has a default), or None when the ABI cannot carry a required argument or
    a return."""
    import externspec as es
    from externspec.abi import arg_type

    inputs = []
    written = set(int_arguments(schema)) if given == ALL else {given}
    for a in schema.arguments:
        at = arg_type(a.real_type)
        if a.name in written:
            arg: dict[str, Any] | None = _benign(at.base, at.is_list, at.elem_optional, es)
            assert arg is not None
        elif a.has_default_value():
            continue
        elif at.optional:
            arg = {"as_none": True}
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
    return [case[0] for case in _listed("--list")]


def hostile_cases() -> list[Case]:
    """Every ABI-compatible op of a fresh torch, each int / int[] / SymInt argument, each hostile int."""
    return _listed("--list-hostile")


def _listed(flag: str) -> list[Case]:
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run([sys.executable, "-m", "tests.support.op_sweep", flag], cwd=root, capture_output=True,
                         text=True, check=True)
    return [(op, arg, value, rank) for op, arg, value, rank in json.loads(run.stdout)]


def _list_cases(hostile: bool) -> list[Case]:
    import torch

    out: list[Case] = []
    for name in sorted(torch._C._dispatch_get_all_op_names()):
        op, _, overload = name.partition(".")
        schema = torch._C._get_schema(op, overload)
        if node_for(schema) is None:
            continue
        if not hostile:
            out.append(benign(name))
            continue
        args = int_arguments(schema)
        args += [ALL] if len(args) > 1 else []
        out += [(name, arg, value, rank) for rank in SHAPES for arg in args for value in HOSTILE_INTS]
    return out


def _int_slots(layout: NodeLayout, arg: str) -> list[int]:
    """The int-array slots of argument `arg` (every int argument for ALL), from the executor's layout."""
    return [k for a in layout.args if a.kind == "int" and arg in (ALL, a.name) for k in range(a.start, a.stop)]


def worker(cases: list[Case], progress: Path, allow_all: bool) -> None:
    import resource
    import warnings

    import torch

    import externspec as es
    from externspec.abi import op_policy

    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    mapped = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (mapped + HEADROOM, resource.RLIM_INFINITY))
    allow = list(op_policy.policy().denied) if allow_all else []
    with progress.open("a", encoding="utf-8") as log:
        for op_name, arg, value, rank in cases:
            log.write(json.dumps([op_name, arg, value, rank]) + "\n")
            log.flush()
            op, _, overload = op_name.partition(".")
            doc = node_for(torch._C._get_schema(op, overload), arg)
            assert doc is not None  # the case lists hold only ops the ABI carries
            try:
                ex = es.ProxyExecutor(es.loads(json.dumps(doc), es.ExternKernelNodes), allow_ops=allow)
                layout = ex.plans[0].layout
                tensors = [torch.full(SHAPES[rank], 0.5) for _ in range(layout.tensor_inputs)]
                tensors += [None] * layout.tensor_outputs
                ints = [1] * layout.int_inputs + [0] * layout.int_outputs
                for k in _int_slots(layout, arg) if arg else ():
                    ints[k] = value
                ex.call_function(0, ints, tensors)
            except Exception:  # the kernel refusing the arrays is fine; only a dead worker is not
                pass
        log.write("DONE\n")


def sweep(cases: list[Case], allow_all: bool = False) -> dict[str, str]:
    """{label(case): "crash (exit -N)" | "hang"} for the cases that killed or hung a worker, the
    cases split between JOBS chains of workers run side by side."""
    chains = [_Chain(cases[i::JOBS], allow_all) for i in range(JOBS)]
    with tempfile.TemporaryDirectory(prefix="externspec-sweep-") as tmp:
        while any(c.step(Path(tmp)) for c in chains):
            time.sleep(0.2)
    return {label(case): what for c in chains for case, what in c.bad.items()}


class _Chain:
    """One worker at a time over its cases, restarted after a case that kills or hangs it."""

    def __init__(self, cases: list[Case], allow_all: bool):
        self.todo, self.allow_all = cases, allow_all
        self.bad: dict[Case, str] = {}
        self.proc: subprocess.Popen[str] | None = None
        self.progress = Path()
        self.seen, self.last_change = 0, 0.0

    def step(self, tmp: Path) -> bool:
        """Advance; False once every case is done."""
        if self.proc is None:
            if not self.todo:
                return False
            self._start(tmp)
            return True
        lines = self.progress.read_text().splitlines()
        if self.proc.poll() is None:
            if len(lines) != self.seen:
                self.seen, self.last_change = len(lines), time.monotonic()
            elif time.monotonic() - self.last_change > HANG_SECONDS:
                self.proc.kill()
                self.proc.wait()
            return True
        rc, self.proc = self.proc.returncode, None
        if lines and lines[-1] == "DONE":
            self.todo = []
            return False
        if not lines:
            raise RuntimeError(f"the sweep worker died before its first case (exit {rc})")
        op, arg, value, rank = json.loads(lines[-1])
        culprit = (op, arg, value, rank)
        self.bad[culprit] = "hang" if rc == -9 else f"crash (exit {rc})"
        self.todo = self.todo[self.todo.index(culprit) + 1:]
        return True

    def _start(self, tmp: Path) -> None:
        root = Path(__file__).resolve().parents[2]
        self.progress = tmp / f"progress-{id(self)}-{len(self.bad)}.txt"
        self.progress.write_text("")
        cmd = [sys.executable, "-m", "tests.support.op_sweep", "--worker", str(self.progress)]
        if self.allow_all:
            cmd.append("--allow-all")
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        self.proc = subprocess.Popen(cmd, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, text=True, env=env)
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(self.todo))
        self.proc.stdin.close()
        self.seen, self.last_change = 0, time.monotonic()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker", type=Path)
    parser.add_argument("--allow-all", action="store_true", help="pass every denied op in allow_ops")
    parser.add_argument("--hostile", action="store_true", help="hostile ints in every int argument")
    parser.add_argument("--list", action="store_true", help="print the benign cases as JSON")
    parser.add_argument("--list-hostile", action="store_true", help="print the hostile cases as JSON")
    args = parser.parse_args()
    if args.list or args.list_hostile:
        print(json.dumps(_list_cases(args.list_hostile)))
        return 0
    if args.worker:
        worker([(op, arg, value, rank) for op, arg, value, rank in json.loads(sys.stdin.read())], args.worker,
               args.allow_all)
        return 0
    cases = hostile_cases() if args.hostile else [benign(op) for op in abi_ops()]
    start = time.monotonic()
    bad = sweep(cases, args.allow_all)
    ops = {case[0] for case in cases}
    print(f"{len(cases)} calls of {len(ops)} ops and overloads in {time.monotonic() - start:.1f} s "
          f"(cpu count {os.cpu_count()})")
    for name, what in bad.items():
        print(f"{name}: {what}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
