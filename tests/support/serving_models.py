"""A package whose one extern call is a Python custom op that waits for its peers: while a
`threading.Barrier` is set (`rendezvous_barrier`), each call of `externspec_serving::rendezvous`
waits at it, so N threads get past it only when N runs of the model are inside it at once. With a
runner that runs one call at a time the barrier never fills. A test may set any object with a
`wait(timeout)` method instead (a gate that makes a run fail). Compiled once, cached
(artifacts._cached, keyed by this file and torch's version).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import torch

from .artifacts import _cached
from .package_cache import compile_package

BARRIER_TIMEOUT_S = 120.0  # only a broken run waits this long: a filled barrier opens at once


class Waiter(Protocol):
    """What each call waits at: a `threading.Barrier`, or a test's own gate."""

    def wait(self, timeout: float | None = None) -> object: ...


_barrier: Waiter | None = None


def rendezvous_barrier(barrier: Waiter | None) -> None:
    global _barrier
    _barrier = barrier


@torch.library.custom_op("externspec_serving::rendezvous", mutates_args=())
def rendezvous(x: torch.Tensor) -> torch.Tensor:
    if _barrier is not None:
        _barrier.wait(timeout=BARRIER_TIMEOUT_S)
    return x + 1


@rendezvous.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


class Rendezvous(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rendezvous(x * 2) * 3


def package() -> Path:
    def build(path: Path) -> None:
        compile_package(Rendezvous(), (torch.ones(4),), path)

    return _cached("serving_rendezvous.pt2", build, key_files=(Path(__file__),))
