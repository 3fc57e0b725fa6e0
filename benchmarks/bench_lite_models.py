"""Whole models in AOTInductor lite mode (tests/support/zoo.py): per-forward time of externspec's
runner against torch's, and the executor's own cost per extern call.

torch's runner cannot run these lite packages (addmm's kwarg-only defaults desync its arrays),
so the rows compare, side by side on the same inputs: eager; torch's runner on the same model
compiled in default mode (most ops generated or C-shim kernels, few extern calls); externspec's
runner on that default package; externspec's runner on the lite package. Then, for every extern
call of one lite forward (recorded with the arrays the wrapper passed), `call_function` in a C++
loop against the floor executor's bare `callBoxed` loop over the same prepared stack (benchmarks/
floor.py): the difference is what the executor adds per call (slicing, checks, storing outputs).

Run: `python benchmarks/run.py bench_lite_models` (or `make bench`).
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path
from typing import Any

import torch

from benchmarks.timing import best_of
from tests.support import zoo
from tests.support.artifacts import _cached, read_member

MODELS = ("transformer", "mlp")
FORWARDS = 200
REPEATS = 5
CALL_ITERATIONS = 2000


def _default_package(name: str) -> Path:
    """The same zoo model compiled in AOTInductor's default mode (cached)."""
    model = zoo.ZOO[name]

    def build(path: Path) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            ep = torch.export.export(model.module(), model.inputs(0), dynamic_shapes=model.dynamic_shapes)
            torch._inductor.aoti_compile_and_package(ep, package_path=str(path))

    return _cached(f"default_{name}.pt2", build, key_files=(Path(__file__), Path(zoo.__file__)))


def _per_forward(fn: Any) -> float:
    return best_of(lambda: [fn() for _ in range(FORWARDS)], REPEATS) / FORWARDS


def _torch_runs(path: Path, inputs: tuple[torch.Tensor, ...]) -> str | None:
    """None if torch's runner runs the package, else the first line of its error."""
    try:
        torch._inductor.aoti_load_package(str(path))(*inputs)
    except RuntimeError as exc:
        return str(exc).strip().splitlines()[0][:90]
    return None


def _recorded_calls(runner: Any, spec: Any, inputs: list[torch.Tensor]) -> list[tuple[int, list[int], list[Any]]]:
    """Each extern call of one forward with the arrays the compiled wrapper passed."""
    import externspec as es

    ex = es.ProxyExecutor(spec)
    calls = []

    def record(index: int, int_args: list[int], tensor_args: list[Any]) -> None:
        calls.append((index, list(int_args), list(tensor_args)))
        ex.call_function(index, int_args, tensor_args)

    runner.run_flat_with(record, inputs)
    return calls


def _call_overhead(spec: Any, calls: list[tuple[int, list[int], list[Any]]]) -> tuple[float, float, int]:
    """(executor s/call, bare callBoxed s/call, calls measured), averaged over the calls."""
    import externspec as es
    from benchmarks import floor

    timed = floor.module().Calls(es.dumps(spec))
    t_exec = t_boxed = 0.0
    measured = 0
    for index, ints, tensors in calls:
        try:
            boxed = min(timed.floor(index, tensors, CALL_ITERATIONS, ints) for _ in range(REPEATS))
        except ValueError:  # list arguments: the bare loop does not fill them
            continue
        t_boxed += boxed
        t_exec += min(timed.externspec(index, tensors, CALL_ITERATIONS, ints) for _ in range(REPEATS))
        measured += 1
    n = measured * CALL_ITERATIONS
    return t_exec / n, t_boxed / n, measured


def _model_lines(name: str) -> list[str]:
    from torch.utils import _pytree as pytree

    import externspec as es

    us = 1e6
    lines: list[str] = []
    model = zoo.ZOO[name]
    module, inputs = model.module(), model.inputs(0)
    lite, default = zoo.lite_package(name), _default_package(name)
    spec = es.loads(read_member(lite, ".wrapper.json"), es.ExternKernelNodes)
    ours_lite, ours_default = es.cpp.AOTIRunner(lite), es.cpp.AOTIRunner(default)
    torch_default = torch._inductor.aoti_load_package(str(default)).loader
    with torch.no_grad():
        want = pytree.tree_leaves(module(*inputs))
    for got in (ours_lite.run_flat(list(inputs)), ours_default.run_flat(list(inputs)),
                torch_default.run(list(inputs))):
        for g, w in zip(got, want, strict=True):
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
    lite_failure = _torch_runs(lite, inputs)

    def eager() -> Any:
        with torch.no_grad():
            return module(*inputs)

    rows = [
        ("eager (torch.no_grad)", eager),
        ("torch runner, default-mode package", lambda: torch_default.run(list(inputs))),
        ("es.cpp.AOTIRunner, default-mode package", lambda: ours_default.run_flat(list(inputs))),
        (f"es.cpp.AOTIRunner, lite package ({len(spec.nodes)} extern calls)",
         lambda: ours_lite.run_flat(list(inputs))),
    ]
    if lite_failure is None:
        torch_lite = torch._inductor.aoti_load_package(str(lite)).loader
        rows.append(("torch runner, lite package", lambda: torch_lite.run(list(inputs))))
    times = {label: _per_forward(fn) for label, fn in rows}
    shape = "x".join(map(str, inputs[0].shape))
    lines.append(f"  {name} (input {shape})")
    lines += [f"    {label:<58}{t * us:>10.1f}" for label, t in times.items()]
    if lite_failure is not None:
        lines.append(f"    torch runner, lite package: fails ({lite_failure})")
    lite_t = times[rows[3][0]]
    lines.append(f"    lite / torch default: {lite_t / times[rows[1][0]]:.2f}; "
                 f"lite / eager: {lite_t / times[rows[0][0]]:.2f}")
    t_exec, t_boxed, measured = _call_overhead(spec, _recorded_calls(ours_lite, spec, list(inputs)))
    lines.append(f"    per extern call over {measured} of {len(spec.nodes)} calls (list arguments skipped): "
                 f"call_function {t_exec * us:.2f} µs, bare callBoxed {t_boxed * us:.2f} µs, "
                 f"executor overhead {(t_exec - t_boxed) * us:.2f} µs")
    return lines


def _against_eager(run: Any, model: zoo.ZooModel) -> str:
    """"equal" when `run` matches eager at every input size the model takes, else the first failure."""
    from torch.utils import _pytree as pytree

    module = model.module()
    for variant in (0, 1) if model.dynamic else (0,):
        inputs = model.inputs(variant)
        with torch.no_grad():
            want = pytree.tree_leaves(module(*inputs))
        try:
            got = run(list(inputs))
            for g, w in zip(got, want, strict=True):
                torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
        except Exception as exc:  # a table cell: what failed, on which size
            return f"size {variant}: {type(exc).__name__}: {str(exc).strip().splitlines()[0][:60]}"
    return "equal" + (" (2 sizes)" if model.dynamic else "")


def _zoo_lines() -> list[str]:
    """Every zoo model in lite mode: extern calls, both executors against eager, torch's runner."""
    import externspec as es

    lines = [
        "Lite-mode zoo (tests/support/zoo.py): each package through both executors, against eager",
        f"  {'model':<18}{'extern calls':>13}  {'es.cpp.AOTIRunner':<20}{'es.ProxyExecutor':<20}torch runner",
    ]
    for name, model in zoo.ZOO.items():
        path = zoo.lite_package(name)
        spec = es.loads(read_member(path, ".wrapper.json"), es.ExternKernelNodes)
        runner = es.cpp.AOTIRunner(path)
        cpp = _against_eager(runner.run_flat, model)
        replay = functools.partial(runner.run_flat_with, es.ProxyExecutor(spec).call_function)
        python = _against_eager(replay, model)
        try:
            theirs = _against_eager(torch._inductor.aoti_load_package(str(path)).loader.run, model)
        except RuntimeError as exc:  # torch's loader refuses some lite packages outright
            theirs = f"load: {str(exc).strip().splitlines()[-1][:60]}"
        lines.append(f"  {name:<18}{len(spec.nodes):>13}  {cpp:<20}{python:<20}{theirs}")
    return lines


def run() -> list[str]:
    lines = _zoo_lines()
    lines.append("Lite-mode models (lite_mode_options): µs per forward, and the executor's cost per extern call")
    for name in MODELS:
        lines += _model_lines(name)
    return lines



if __name__ == "__main__":
    print("\n".join(run()))
