"""Package runner cost, externspec's C++ loader (`es.cpp.AOTIRunner`) vs torch's
(`torch._inductor.aoti_load_package`), side by side on the same packages: the time to load a
package (open the zip, extract, dlopen, create the model, load the weights) and the time of one
forward (inputs checked, run, outputs taken). The packages are the tests' small runner model, with
its weights in the library and in a blob beside it (compiled once, cached under `<cache>/aoti/`).

Throughput: runs per second of one runner shared by 1 and by 2 Python threads (the bindings release
the GIL), externspec's with `num_models=N` and torch's with `num_runners=N`, N the thread count, on
the same package: the small runner model and the lite-mode ConvBN (2 extern calls; torch's loader
cannot run the lite-mode transformer or GRU, whose addmm calls its executor miscounts). torch's
intra-op threads are set to 1 while it is measured, so that each run uses one core, as a server
running requests side by side would set them.

Run: `python benchmarks/run.py bench_cpp_runner` (or `make bench`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import torch

from benchmarks.timing import best_of

LOADS = 5
FORWARDS = 2000
REPEATS = 5


def _load_pair(path: str) -> tuple[float, float]:
    import externspec as es

    def ours() -> None:
        es.cpp.AOTIRunner(path).close()

    def theirs() -> None:
        torch._inductor.aoti_load_package(path)

    ours()
    theirs()
    t_ours, t_theirs = [], []
    for _ in range(3):  # interleaved: machine noise hits both alike
        t_theirs.append(best_of(theirs, LOADS))
        t_ours.append(best_of(ours, LOADS))
    return min(t_ours), min(t_theirs)


def _forward_pairs(path: str, inputs: tuple[torch.Tensor, ...]) -> list[tuple[float, float]]:
    """(ours, torch) seconds per forward, for the flat call of each runner's binding (a list of
    tensors in, a list out: `run_flat` vs torch's `loader.run`) and for the user-level call
    (pytree in and out: `AOTIRunner(...)(*inputs)` vs the `aoti_load_package(...)(*inputs)` model)."""
    import externspec as es

    ours = es.cpp.AOTIRunner(path)
    theirs = torch._inductor.aoti_load_package(path)
    flat = list(inputs)
    for a, b in zip(ours.run_flat(flat), theirs.loader.run(flat), strict=True):
        assert torch.equal(a, b), "runners disagree"

    def many(fn: Any) -> Any:
        def loop() -> None:
            for _ in range(FORWARDS):
                fn()
        return loop

    pairs = []
    for fn_ours, fn_theirs in ((lambda: ours.run_flat(flat), lambda: theirs.loader.run(flat)),
                               (lambda: ours(*inputs), lambda: theirs(*inputs))):
        t_ours, t_theirs = [], []
        for _ in range(3):  # interleaved: machine noise hits both alike
            t_theirs.append(best_of(many(fn_theirs), REPEATS) / FORWARDS)
            t_ours.append(best_of(many(fn_ours), REPEATS) / FORWARDS)
        pairs.append((min(t_ours), min(t_theirs)))
    return pairs


THROUGHPUT_RUNS = 400  # per thread
THROUGHPUT_REPEATS = 7


def _runs_per_second(run: Callable[[], Any], threads: int) -> float:
    """`threads` threads each making THROUGHPUT_RUNS runs, released together: runs per second."""
    start_line = threading.Barrier(threads + 1)
    intra_op = torch.get_num_threads()

    def worker() -> None:
        # Each thread's own OpenMP setting: a new thread starts from OpenMP's default (all cores),
        # not from the caller's torch.set_num_threads, and an op's parallel region would then
        # compete with the other runs for the cores.
        torch.set_num_threads(intra_op)
        start_line.wait()
        for _ in range(THROUGHPUT_RUNS):
            run()

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for w in workers:
        w.start()
    start_line.wait()
    start = time.perf_counter()
    for w in workers:
        w.join()
    return threads * THROUGHPUT_RUNS / (time.perf_counter() - start)


def _throughput(path: str, inputs: list[torch.Tensor], threads: int) -> tuple[float, float]:
    """(externspec, torch) runs per second with `threads` threads on one runner of each."""
    from torch._inductor.package import load_package

    import externspec as es

    ours = es.cpp.AOTIRunner(path, num_models=threads)
    theirs = load_package(path, num_runners=threads).loader
    for a, b in zip(ours.run_flat(inputs), theirs.run(inputs), strict=True):
        assert torch.equal(a, b), "runners disagree"
    r_ours, r_theirs = [], []
    for _ in range(THROUGHPUT_REPEATS):  # interleaved: machine noise hits both alike
        r_theirs.append(_runs_per_second(lambda: theirs.run(inputs), threads))
        r_ours.append(_runs_per_second(lambda: ours.run_flat(inputs), threads))
    return max(r_ours), max(r_theirs)


def throughput_lines() -> list[str]:
    from tests.support import cpp_models as cm
    from tests.support import zoo

    lines = [
        "C++ package runner throughput: one runner shared by N Python threads (es num_models=N, torch num_runners=N)",
        f"  {'package':<26}{'threads':>8}{'runs/s: ours':>14}{'torch':>10}{'ratio':>7}",
    ]
    packages = (("runner (small)", str(cm.package("runner")), list(cm.MODELS["runner"].inputs(8))),
                ("lite conv_bn", str(zoo.lite_package("conv_bn")), list(zoo.ZOO["conv_bn"].inputs(0))))
    intra_op = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for label, path, inputs in packages:
            for threads in (1, 2):
                ours, theirs = _throughput(path, inputs, threads)
                lines.append(f"  {label:<26}{threads:>8}{ours:>14.0f}{theirs:>10.0f}{ours / theirs:>7.2f}")
    finally:
        torch.set_num_threads(intra_op)
    lines.append("  ratio = externspec / torch (target >= 1.0); intra-op threads 1")
    return lines


def run() -> list[str]:
    from tests.support import cpp_models as cm

    model = cm.MODELS["runner"]
    inputs = model.inputs(8)
    lines = [
        "C++ package runner: es.cpp.AOTIRunner vs torch aoti_load_package, same package (4 outputs, 2 inputs)",
        f"  {'package':<22}{'load ms: ours':>14}{'torch':>9}{'ratio':>7}"
        f"{'flat forward µs: ours':>24}{'torch':>9}{'ratio':>7}{'pytree call µs: ours':>23}{'torch':>9}{'ratio':>7}",
    ]
    for name, label in (("runner", "weights in library"), ("runner_blob", "weights in blob")):
        path = str(cm.package(name))
        load_ours, load_torch = _load_pair(path)
        row = f"  {label:<22}{load_ours * 1e3:>14.2f}{load_torch * 1e3:>9.2f}{load_ours / load_torch:>7.2f}"
        for (ours, theirs), width in zip(_forward_pairs(path, inputs), (24, 23), strict=True):
            row += f"{ours * 1e6:>{width}.2f}{theirs * 1e6:>9.2f}{ours / theirs:>7.2f}"
        lines.append(row)
    lines.append("  ratio = externspec / torch (target <= 1.0); forward includes externspec's input checks")
    return lines + throughput_lines()


if __name__ == "__main__":
    print("\n".join(run()))
