"""Python ProxyExecutor: per-call overhead on a tiny op, and spec load time for 10k nodes.

`run()` returns the lines of a table; each ratio is measured side by side in one run (best of
several repeats, interleaved, so machine noise hits both sides alike). Target: call_function
<= 2x the time of calling the op directly (docs/performance.md).
"""

from __future__ import annotations

import json
import tempfile
import time
import timeit
from pathlib import Path

import torch

import externspec as es

REPEATS = 7
NUMBER = 20_000
NODES = 10_000


def _best(fn, number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=1)) / number


def _interleaved(fns: dict, number: int) -> dict[str, float]:
    best = {k: float("inf") for k in fns}
    for _ in range(REPEATS):
        for k, fn in fns.items():
            best[k] = min(best[k], _best(fn, number))
    return best


def bench_call() -> list[str]:
    a, b = torch.ones(8), torch.ones(8)
    lines = []
    for label, op, args in [("aten::add.Tensor (8 floats, Scalar alpha in the int array)", torch.ops.aten.add.Tensor,
                             (a, b)),
                            ("aten::mul.Tensor (8 floats)", torch.ops.aten.mul.Tensor, (a, b))]:
        builder = es.SpecBuilder()
        site = builder.add(op, args)
        ex = es.ProxyExecutor(es.loads(es.dumps(builder.build()), es.ExternKernelNodes))
        ints, slots = site.int_args, list(site.tensor_args)
        t = _interleaved({"direct": lambda op=op: op(a, b),
                          "executor": lambda ex=ex, ints=ints, slots=slots: ex.call_function(0, ints, slots)}, NUMBER)
        ratio = t["executor"] / t["direct"]
        lines.append(f"{label:<62} {t['direct'] * 1e6:8.2f} µs {t['executor'] * 1e6:8.2f} µs {ratio:6.2f}x "
                     f"{'OK' if ratio <= 2 else 'ABOVE TARGET'} (<= 2x)")
    return lines


def _big_spec() -> es.ExternKernelNodes:
    x = torch.randn(4, 6)
    calls = [
        (torch.ops.aten.add.Tensor, (x, x), {"alpha": 2}),
        (torch.ops.aten.split.Tensor, (x, 2, 1), {}),
        (torch.ops.aten.index.Tensor, (x, [None, torch.tensor([0, 2])]), {}),
        (torch.ops.aten.to.dtype, (x, torch.float16), {}),
        (torch.ops.aten.clone.default, (x,), {"memory_format": torch.contiguous_format}),
        (torch.ops.aten.sum.dim_IntList, (x, [1], True), {"dtype": torch.float64}),
        (torch.ops.aten.clamp.default, (x, -0.5, float("inf")), {}),
        (torch.ops.aten.cat.default, ([x, x], 0), {}),
    ]
    builder = es.SpecBuilder()
    for i in range(NODES):
        op, args, kwargs = calls[i % len(calls)]
        builder.add(op, args, kwargs)
    return builder.build()


def bench_load() -> list[str]:
    spec = _big_spec()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "spec.json"
        es.dump(spec, path)
        size = path.stat().st_size
        data = path.read_bytes()
        t = _interleaved({
            "json": lambda: json.loads(data),
            "decode": lambda: es.loads(data, es.ExternKernelNodes),
            "load": lambda: es.ProxyExecutor(path),
        }, 1)
    return [
        f"spec load, {NODES} nodes ({size / 1e6:.1f} MB): ProxyExecutor(path) {t['load'] * 1e3:8.1f} ms "
        f"({t['load'] / NODES * 1e6:.1f} µs/node)",
        f"  of which es.loads decode+validate {t['decode'] * 1e3:8.1f} ms; plain json.loads of the same file "
        f"{t['json'] * 1e3:.1f} ms (decode {t['decode'] / t['json']:.1f}x json.loads); resolve+validate+plan "
        f"{(t['load'] - t['decode']) * 1e3:.1f} ms",
    ]


def run() -> list[str]:
    start = time.perf_counter()
    lines = ["Python ProxyExecutor.call_function vs calling the op directly (best of "
             f"{REPEATS}x{NUMBER}, interleaved)",
             f"{'op':<62} {'direct':>11} {'executor':>11} {'ratio':>7}"]
    lines += bench_call()
    lines += bench_load()
    lines.append(f"(bench_executor took {time.perf_counter() - start:.0f} s)")
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
