"""The GPU check (`make gpu-check`; docs/cuda.md): builds es.cpp against the installed torch (with
its CUDA path where torch and a CUDA toolkit have one), compiles the zoo (tests/gpu/zoo.py) in
default and lite mode, runs every model through externspec's runner and torch's against eager,
runs two threads with two streams on one runner, times a forward and the per-extern-call cost
against torch's runner, prints a table and, last, `gpu-check: N passed, M failed`.

`--device cpu` is the dry mode: the same code on the CPU (no streams), so it runs anywhere."""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch.utils import _pytree as pytree

from tests.gpu import zoo


@dataclass
class Row:
    check: str
    ok: bool
    detail: str = ""
    es_ms: float | None = None
    torch_ms: float | None = None
    skipped: bool = False

    @property
    def result(self) -> str:
        return "skip" if self.skipped else "pass" if self.ok else "FAIL"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="gpu-check", description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                   help="cuda (default): the check; cpu: the dry mode, the same code on the CPU")
    p.add_argument("--cases", default=",".join(zoo.CASES),
                   help=f"comma-separated zoo cases (default: all of {', '.join(zoo.CASES)})")
    p.add_argument("--modes", default="default,lite", help="comma-separated: default, lite")
    p.add_argument("--work-dir", type=Path, default=Path(os.environ.get("EXTERNSPEC_CACHE_DIR", ".cache")) / "gpu",
                   help="where compiled packages and the op library are cached")
    p.add_argument("--repeat", type=int, default=50, help="timed forwards per runner (median reported)")
    p.add_argument("--matrix", action=argparse.BooleanOptionalAction, default=True,
                   help="also run the cross-version matrix: the CPU packages of every supported torch in "
                        "tests/data/matrix/ through both executors (default: on)")
    p.add_argument("--jobs", type=int, default=max(1, min(4, (os.cpu_count() or 1) // 4)),
                   help="packages compiled at once, in worker processes (default: a quarter of the cores, "
                        "at most 4)")
    args = p.parse_args(argv)
    args.cases = [c for c in args.cases.split(",") if c]
    unknown = [c for c in args.cases if c not in zoo.CASES]
    if unknown:
        p.error(f"unknown case(s) {', '.join(unknown)}; the zoo has {', '.join(zoo.CASES)}")
    args.modes = [m for m in args.modes.split(",") if m]
    if not set(args.modes) <= {"default", "lite"}:
        p.error(f"--modes takes default and/or lite, got {','.join(args.modes)}")
    if args.jobs < 1:
        p.error("--jobs must be at least 1")
    return args


def plan(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(case, mode) pairs to check, in order."""
    return [(name, mode) for name in args.cases for mode in args.modes if mode in zoo.CASES[name].modes]


def compile_all(args: argparse.Namespace) -> None:
    """Compile every package the check needs, `--jobs` at a time (separate processes: AOTInductor
    compiles one model at a time per process); failures surface when the case runs."""
    todo = [(n, m) for n, m in plan(args)
            if not zoo.package_path(zoo.CASES[n], args.device, lite=m == "lite", out_dir=args.work_dir).exists()]
    if args.jobs == 1 or len(todo) < 2:
        return
    with concurrent.futures.ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(zoo.compile_named, n, args.device, m == "lite", args.work_dir) for n, m in todo]
        concurrent.futures.wait(futures)


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def median_ms(fn: Callable[[], Any], device: str, repeat: int) -> float:
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeat):
        sync(device)
        t = time.perf_counter()
        fn()
        sync(device)
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def close(got: Any, want: Any) -> str:
    """'' when equal within float tolerance (and on the same device), else what differs."""
    g, w = pytree.tree_leaves(got), pytree.tree_leaves(want)
    if len(g) != len(w):
        return f"{len(g)} outputs, eager has {len(w)}"
    for i, (a, b) in enumerate(zip(g, w, strict=True)):
        if a.device != b.device:
            return f"output {i} on {a.device}, eager's on {b.device}"
        try:
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
        except AssertionError as exc:
            return f"output {i}: {str(exc).splitlines()[0]}"
    return ""


def check_case(es: Any, case: zoo.Case, mode: str, args: argparse.Namespace) -> list[Row]:
    device = args.device
    label = f"{case.name}/{mode}"
    path = zoo.compile_case(case, device, lite=mode == "lite", out_dir=args.work_dir)
    if case.needs_op:
        zoo.load_op(device, args.work_dir)  # the runner resolves the op at load (a cached package compiled none)
    runner = es.cpp.AOTIRunner(path, device=device)
    module = case.module(device)
    rows = []
    for variant in range(len(case.shapes)):
        inputs = case.inputs(device, variant)
        with torch.no_grad():
            want = module(*inputs)
        diff = close(runner(*inputs), want)
        try:
            torch_runner = torch._inductor.aoti_load_package(str(path))
            torch_diff = close(torch_runner(*inputs), want)
            torch_note = "torch's runner equal" if not torch_diff else f"torch's runner differs: {torch_diff}"
        except Exception as exc:  # torch's own runner failing is reported, not counted
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            torch_runner, torch_note = None, f"torch's runner fails: {type(exc).__name__}: {first[:120]}"
        es_ms = median_ms(lambda x=inputs: runner(*x), device, args.repeat)
        torch_ms = None
        if torch_runner is not None and "fails" not in torch_note:
            torch_ms = median_ms(lambda r=torch_runner, x=inputs: r(*x), device, args.repeat)
        shape = "x".join(map(str, inputs[0].shape))
        rows.append(Row(f"{label} [{shape}]", not diff, diff or torch_note, es_ms, torch_ms))
    if case.extern_calls and rows[-1].es_ms is not None and rows[-1].torch_ms is not None:
        per_es, per_torch = rows[-1].es_ms * 1e3 / case.extern_calls, rows[-1].torch_ms * 1e3 / case.extern_calls
        rows.append(Row(f"{label} per extern call", True,
                        f"{per_es:.1f} us vs torch's {per_torch:.1f} us (ratio {per_es / per_torch:.2f}; "
                        f"{case.extern_calls} calls per forward, kernels included)"))
    return rows


def check_streams(es: Any, args: argparse.Namespace) -> Row:
    """One runner, two threads, each running on its own stream; every result equal to eager."""
    case = zoo.CASES["custom_op"] if "custom_op" in args.cases else zoo.CASES[args.cases[0]]
    if args.device != "cuda":
        return Row("two threads, two streams", True, "needs cuda (dry mode)", skipped=True)
    path = zoo.compile_case(case, "cuda", lite=False, out_dir=args.work_dir)
    if case.needs_op:
        zoo.load_op("cuda", args.work_dir)
    runner = es.cpp.AOTIRunner(path, device="cuda")
    inputs = [case.inputs("cuda", 0), tuple(t * 2 for t in case.inputs("cuda", 0))]
    with torch.no_grad():
        wants = [case.module("cuda")(*x) for x in inputs]
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    errors: list[str] = []

    def work(k: int) -> None:
        try:
            for _ in range(200):
                got = runner.run(*inputs[k], stream=streams[k])
                streams[k].synchronize()
                if diff := close(got, wants[k]):
                    errors.append(f"thread {k}: {diff}")
                    return
        except Exception as exc:
            errors.append(f"thread {k}: {type(exc).__name__}: {exc}")

    torch.cuda.synchronize()
    t = time.perf_counter()
    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    ms = (time.perf_counter() - t) * 1e3
    return Row(f"two threads, two streams ({case.name})", not errors,
               "; ".join(errors) or f"2 x 200 runs equal to eager in {ms:.0f} ms")


def check_cpu_input_refused(es: Any, args: argparse.Namespace) -> Row:
    if args.device != "cuda":
        return Row("CPU input to a CUDA model", True, "needs cuda (dry mode)", skipped=True)
    case = zoo.CASES[args.cases[0]]
    runner = es.cpp.AOTIRunner(zoo.compile_case(case, "cuda", lite=False, out_dir=args.work_dir), device="cuda")
    try:
        runner(*(t.cpu() for t in case.inputs("cuda")))
    except es.CallError as exc:
        return Row("CPU input to a CUDA model", "is on cpu, the model runs on cuda" in str(exc), str(exc)[:100])
    return Row("CPU input to a CUDA model", False, "no error")


def check_matrix(es: Any) -> list[Row]:
    """The cross-version matrix under this torch (tests/support/matrix.py: the rule of
    tests/torch/test_torch_matrix.py, a row per package and executor; a known failure passes as one)."""
    from tests.support import matrix

    rows = []
    for writer, case, path in matrix.packages():
        known = matrix.KNOWN_FAILING.get((writer, case))
        for route in ("es.cpp", "python"):
            label = f"matrix: torch {writer}'s {case} via {route}"
            try:
                result = matrix.check(writer, path, route)
            except Exception as exc:  # every failure is a row
                ok = known is not None and isinstance(exc, getattr(es, known[0]))
                rows.append(Row(label, ok, ("known failure (matrix.KNOWN_FAILING): " if known else "") + failure(exc)))
            else:
                stale = "; listed in matrix.KNOWN_FAILING: remove it" if known else ""
                rows.append(Row(label, not known, result + stale))
    return rows


def failure(exc: BaseException) -> str:
    """A failed step's reason, for its row: the exception's type and the start of its message."""
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"


def print_table(rows: list[Row]) -> None:
    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f}"

    width = max(len(r.check) for r in rows)
    print(f"{'check':<{width}}  {'result':<6}  {'es ms':>8}  {'torch ms':>8}  {'ratio':>6}  detail")
    for r in rows:
        ratio = f"{r.es_ms / r.torch_ms:.2f}" if r.es_ms and r.torch_ms else "-"
        print(f"{r.check:<{width}}  {r.result:<6}  {ms(r.es_ms):>8}  {ms(r.torch_ms):>8}  "
              f"{ratio:>6}  {r.detail}")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    start = time.monotonic()
    rows: list[Row] = []
    print(f"gpu-check: torch {torch.__version__} (CUDA {torch.version.cuda}), Python {sys.version.split()[0]}, "
          f"device {args.device}" + (f" ({torch.cuda.get_device_name()})" if args.device == "cuda" else ""),
          flush=True)
    if args.device == "cuda" and not torch.cuda.is_available():
        rows.append(Row("a CUDA device is visible", False, "torch.cuda.is_available() is False"))
    else:
        t = time.monotonic()
        try:
            import externspec as es

            ext = es.cpp.extension()
            built = Row("es.cpp builds", bool(ext.with_cuda) or args.device == "cpu",
                        f"with_cuda={ext.with_cuda} in {time.monotonic() - t:.0f} s")
        except Exception as exc:  # a step that fails is a row with its reason, like every other
            built = Row("es.cpp builds", False, failure(exc))
        rows.append(built)
        print(f"es.cpp ready ({built.detail})", flush=True)
        if built.ok:
            t = time.monotonic()
            compile_all(args)
            print(f"zoo compiled ({time.monotonic() - t:.0f} s, {args.jobs} at a time)", flush=True)
            steps: list[tuple[str, Callable[[], list[Row]]]] = [
                (f"{name}/{mode}", lambda name=name, mode=mode: check_case(es, zoo.CASES[name], mode, args))
                for name, mode in plan(args)]
            if args.matrix:
                steps.append(("matrix", lambda: check_matrix(es)))
            steps += [("cpu input", lambda: [check_cpu_input_refused(es, args)]),
                      ("streams", lambda: [check_streams(es, args)])]
            for what, step in steps:
                try:
                    got = step()
                except Exception as exc:
                    got = [Row(what, False, failure(exc))]
                rows += got
                for r in got:
                    print(f"  {r.result} {r.check} ({time.monotonic() - start:.0f} s)", flush=True)
    print()
    print_table(rows)
    failed = sum(not r.ok for r in rows)
    skipped = sum(r.skipped for r in rows)
    if skipped:
        print(f"({skipped} skipped, not counted)")
    print(f"gpu-check: {len(rows) - failed - skipped} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
