"""What the hostile-input limits cost on the normal decode path (bench_python_wire's method:
ExportedProgram documents from gen_program, GC paused, best of N).

Side by side in one process, alternating: `es.loads` as shipped (size check + default depth), the
same call with the limit check removed (what decode cost before the limits existed), and the
opt-in lower nesting limit (`max_depth=64`, a bracket pre-scan) that only callers asking for it pay.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SIZES = (1_000, 10_000)
ROUNDS = 5


def _document(nodes: int) -> bytes:
    sys.path.insert(0, str(ROOT))
    from benchmarks.gen_program import make_exported_program

    return json.dumps(make_exported_program(nodes, seed=nodes)).encode()


def _time(fn: Any) -> float:
    gc.disable()
    try:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start
    finally:
        gc.enable()


def _per_call(fn: Any, calls: int) -> float:
    """Best of 5 averages over `calls` calls (for the sub-microsecond checks)."""
    best = float("inf")
    for _ in range(5):
        best = min(best, _time(lambda: [fn() for _ in range(calls)]) / calls)
    return best


def run() -> list[str]:
    import externspec as es
    from externspec.wire import limits

    lines = ["Python decode cost of the hostile-input limits (ExportedProgram, GC paused; decode best of "
             f"{ROUNDS}, alternating in one process; the checks timed alone as well, since whole-decode timings "
             "on a shared machine are noisier than the check itself)",
             f"{'nodes':>7} {'MB':>6} | {'no limits s':>11} {'shipped s':>9} {'ratio':>6} | {'check us':>8} "
             f"{'of decode':>9} | {'max_depth=64 s':>14} {'ratio':>6} {'pre-scan s':>10}"]
    real_check = limits.check_limits
    for nodes in SIZES:
        data = _document(nodes)
        best = {"none": float("inf"), "shipped": float("inf"), "depth64": float("inf")}
        for _ in range(ROUNDS):
            limits.check_limits = lambda *a, **k: None  # type: ignore[assignment]
            try:
                best["none"] = min(best["none"], _time(lambda d=data: es.loads(d, es.ExportedProgram)))
            finally:
                limits.check_limits = real_check  # type: ignore[assignment]
            best["shipped"] = min(best["shipped"], _time(lambda d=data: es.loads(d, es.ExportedProgram)))
            best["depth64"] = min(best["depth64"], _time(lambda d=data: es.loads(d, es.ExportedProgram, max_depth=64)))
        check = _per_call(lambda d=data: limits.check_limits(d), 100_000)
        prescan = _per_call(lambda d=data: limits.check_limits(d, max_depth=64), 3)
        lines.append(f"{nodes:>7} {len(data) / 1e6:>6.1f} | {best['none']:>11.4f} {best['shipped']:>9.4f} "
                     f"{best['shipped'] / best['none']:>5.3f}x | {check * 1e6:>8.3f} {check / best['none']:>9.1e} | "
                     f"{best['depth64']:>14.4f} {best['depth64'] / best['none']:>5.2f}x {prescan:>10.4f}")
    lines.append("target: the default checks cost nothing measurable (check us / decode ~1e-7); max_depth < 200 is "
                 "opt-in and pays the pre-scan")
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
