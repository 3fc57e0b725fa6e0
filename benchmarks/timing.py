"""Shared timing for the wire benchmarks: best of N runs with the garbage collector paused, as
`externspec.loads` itself pauses it (every contender gets the same treatment)."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def best_of(fn: Callable[[], Any], repeats: int) -> float:
    """The fastest of `repeats` calls of `fn`, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        gc.disable()
        try:
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
    return best


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def peak_rss_growth(fn: Callable[[], Any]) -> tuple[Any, int]:
    """`fn()`'s result and the growth of this process's peak RSS while it ran, in bytes.

    The kernel's high-water mark is reset first (writing 5 to /proc/self/clear_refs), so a peak
    reached earlier, e.g. while importing, cannot hide this one (ru_maxrss never goes down: a
    growth measured from it reads 0 whenever the imports peaked higher)."""
    Path("/proc/self/clear_refs").write_text("5")
    before = _status_kib("VmRSS")
    result = fn()
    return result, (_status_kib("VmHWM") - before) * 1024
