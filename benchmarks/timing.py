"""Shared timing for the wire benchmarks: best of N runs with the garbage collector paused, as
`externspec.loads` itself pauses it (every contender gets the same treatment)."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
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
