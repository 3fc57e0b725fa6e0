"""Per-call cost of the proxy executor on the same compiled model: torch's runner
(`aoti_load_package`, OSSProxyExecutor) vs externspec's (`es.cpp.AOTIRunner`), side by side.

The model chains CALLS extern calls of a C++ custom op (`my_ops::add` of tests/packaging/my_ops.cpp,
built against the installed torch) on 8-element tensors. Each runner also runs a 1-call twin compiled the same
way, and the per-call time is (t(CALLS) - t(1)) / (CALLS - 1): the fixed cost of a forward (Python
call, input handles) cancels, what remains is the executor plus the wrapper's handle juggling
around each call. The floor is the floor executor of benchmarks/cpp/floor/ (what any executor must
do per call: build the stack from the two arrays, callBoxed, move the returns into their output
handles; no checks), a module of its own over the runtime library es.cpp runs (benchmarks/floor.py),
timed twice: through the same compiled wrapper, and in a bare C++ loop without the wrapper.
Both models are compiled once and cached under `<cache>/aoti/`.

Run: `python benchmarks/bench_cpp_executor.py` (or `make bench`).
"""

from __future__ import annotations

import fcntl
import hashlib
import time
from pathlib import Path

import torch

CALLS = 200
FORWARDS = 300
REPEATS = 7


def _load_op() -> torch._ops.OpOverload:
    from tests.packaging import custom_op_package

    custom_op_package.load_ops()
    return torch.ops.my_ops.add.default


class Chain(torch.nn.Module):
    def __init__(self, op: torch._ops.OpOverload, calls: int):
        super().__init__()
        self.op, self.calls = op, calls

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        for _ in range(self.calls):
            x = self.op(x, y)
        return x


def _package(op: torch._ops.OpOverload, calls: int) -> Path:
    from externspec.cpp import cache_dir

    key = hashlib.sha256(Path(__file__).read_bytes() + torch.__version__.encode()).hexdigest()[:16]
    out = cache_dir() / "aoti"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"bench-chain{calls}-{key}.pt2"
    with open(out / f"bench-chain{calls}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            # Two distinct tensors: export treats one tensor passed twice as one aliased input.
            ep = torch.export.export(Chain(op, calls), (torch.randn(8), torch.randn(8)))
            tmp = path.with_suffix(".tmp.pt2")
            torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp))
            tmp.rename(path)
    return path


def _best(fn, forwards: int = FORWARDS, repeats: int = REPEATS) -> float:  # type: ignore[no-untyped-def]
    """Best-of-`repeats` seconds per forward."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(forwards):
            fn()
        best = min(best, (time.perf_counter() - t0) / forwards)
    return best


def run() -> list[str]:
    import externspec as es
    from benchmarks import floor as floor_module

    op = _load_op()
    x, y = torch.randn(8), torch.randn(8)
    want = Chain(op, CALLS)(x, y)
    ext = floor_module.module()
    times: dict[str, dict[int, float]] = {"torch": {}, "externspec": {}, "floor": {}}
    for calls in (1, CALLS):
        path = _package(op, calls)
        theirs = torch._inductor.aoti_load_package(str(path))
        ours = es.cpp.AOTIRunner(path)
        floor = ext.FloorRunner(str(path))  # its own runner of the same package
        if calls == CALLS:
            for got in (ours(x, y), theirs(x, y), floor(x, y)[0]):
                assert torch.equal(got, want), "runners disagree with eager"
        runs = {"torch": lambda loader=theirs.loader: loader.run([x, y]),
                "externspec": lambda impl=ours._impl: impl(x, y),
                "floor": lambda floor=floor: floor(x, y)}
        # Interleave the runners so machine noise hits all alike.
        best: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(3):
            for k, fn in runs.items():
                best[k].append(_best(fn))
        for k, ts in best.items():
            times[k][calls] = min(ts)
    per_call = {k: (v[CALLS] - v[1]) / (CALLS - 1) for k, v in times.items()}

    spec = es.loads('{"nodes": [{"name": "buf0", "node": {"target": "my_ops::add", "inputs": ['
                    '{"name": "a", "arg": {"as_tensor": {"name": "a"}}}, {"name": "b", "arg": {"as_tensor": '
                    '{"name": "b"}}}], "outputs": [{"as_tensor": {"name": "c"}}], "metadata": {}}}]}',
                    es.ExternKernelNodes)
    calls = ext.Calls(es.dumps(spec))
    n = 20000
    boxed = min(calls.floor(0, [x, y], n) for _ in range(REPEATS)) / n

    us = 1e6
    ratio = per_call["externspec"] / per_call["torch"]
    return [
        f"C++ proxy executor: per extern call, {CALLS} calls of my_ops::add on 8 floats per forward",
        f"  {'runner':<44}{'µs/call':>10}{'µs/forward':>13}",
        f"  {'torch aoti_load_package (OSSProxyExecutor)':<44}{per_call['torch'] * us:>10.3f}"
        f"{times['torch'][CALLS] * us:>13.1f}",
        f"  {'es.cpp.AOTIRunner (externspec executor)':<44}{per_call['externspec'] * us:>10.3f}"
        f"{times['externspec'][CALLS] * us:>13.1f}",
        f"  {'floor executor, same compiled wrapper':<44}{per_call['floor'] * us:>10.3f}"
        f"{times['floor'][CALLS] * us:>13.1f}",
        f"  {'floor executor, bare C++ loop (no wrapper)':<44}{boxed * us:>10.3f}",
        f"  ratio externspec / torch per call: {ratio:.2f} (target <= 1.0); "
        f"externspec / floor in the same wrapper: {per_call['externspec'] / per_call['floor']:.2f} (target <= 1.10); "
        f"externspec / bare loop: {per_call['externspec'] / boxed:.2f}",
    ]


if __name__ == "__main__":
    print("\n".join(run()))
