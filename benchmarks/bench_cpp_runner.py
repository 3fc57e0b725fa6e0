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


def _forward_pair(path: str, inputs: tuple[torch.Tensor, ...]) -> tuple[float, float]:
    import externspec as es

    ours = es.cpp.AOTIRunner(path)._impl
    loader = torch._inductor.aoti_load_package(path).loader
    flat = list(inputs)
    for a, b in zip(ours(*flat), loader.run(flat), strict=True):
        assert torch.equal(a, b), "runners disagree"

    def many(fn: Any) -> Any:
        def loop() -> None:
            for _ in range(FORWARDS):
                fn()
        return loop

    t_ours, t_theirs = [], []
    for _ in range(3):
        t_theirs.append(best_of(many(lambda: loader.run(flat)), REPEATS) / FORWARDS)
        t_ours.append(best_of(many(lambda: ours(*flat)), REPEATS) / FORWARDS)
    return min(t_ours), min(t_theirs)


def run() -> list[str]:
    from tests.support import cpp_models as cm

    model = cm.MODELS["runner"]
    inputs = model.inputs(8)
    lines = [
        "C++ package runner: es.cpp.AOTIRunner vs torch aoti_load_package, same package (4 outputs, 2 inputs)",
        f"  {'package':<22}{'load ms: ours':>14}{'torch':>9}{'ratio':>7}"
        f"{'forward µs: ours':>19}{'torch':>9}{'ratio':>7}",
    ]
    for name, label in (("runner", "weights in library"), ("runner_blob", "weights in blob")):
        path = str(cm.package(name))
        load_ours, load_torch = _load_pair(path)
        fwd_ours, fwd_torch = _forward_pair(path, inputs)
        lines.append(f"  {label:<22}{load_ours * 1e3:>14.2f}{load_torch * 1e3:>9.2f}{load_ours / load_torch:>7.2f}"
                     f"{fwd_ours * 1e6:>19.2f}{fwd_torch * 1e6:>9.2f}{fwd_ours / fwd_torch:>7.2f}")
    lines.append("  ratio = externspec / torch (target <= 1.0); forward includes externspec's input checks")
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
