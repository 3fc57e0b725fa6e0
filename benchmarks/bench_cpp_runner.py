"""Package runner cost, externspec's C++ loader (`es.cpp.AOTIRunner`) vs torch's
(`torch._inductor.aoti_load_package`), side by side on the same packages: the time to load a
package (open the zip, extract, dlopen, create the model, load the weights) and the time of one
forward (inputs checked, run, outputs taken). The packages are the tests' small runner model, with
its weights in the library and in a blob beside it (compiled once, cached under `<cache>/aoti/`).

Run: `python benchmarks/run.py bench_cpp_runner` (or `make bench`).
"""

from __future__ import annotations

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
    tensors in, a list out: `_impl.run_flat` vs torch's `loader.run`) and for the user-level call
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
    for fn_ours, fn_theirs in ((lambda: ours._impl.run_flat(flat), lambda: theirs.loader.run(flat)),
                               (lambda: ours(*inputs), lambda: theirs(*inputs))):
        t_ours, t_theirs = [], []
        for _ in range(3):  # interleaved: machine noise hits both alike
            t_theirs.append(best_of(many(fn_theirs), REPEATS) / FORWARDS)
            t_ours.append(best_of(many(fn_ours), REPEATS) / FORWARDS)
        pairs.append((min(t_ours), min(t_theirs)))
    return pairs


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
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
