"""A model whose every value goes through an externspec_test custom op, compiled once with
AOTInductor and cached under <repo>/.cache/aoti/ (keyed by the sources and the torch version), so
test sessions and the C++ executor's tests share one compile (~1 min on 2 cores).
"""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path
from typing import Any

import torch

from externspec._cache import cache_dir

from . import custom_ops as co
from .package_cache import cached, compile_package

CACHE = cache_dir() / "aoti"


class AllOps(torch.nn.Module):
    """One call per custom op, each reading only model inputs, in a fixed order."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
        args, kwargs = co.all_inputs_example(x, y)
        a = co.all_inputs(*args, **kwargs)
        b = co.scalars(x, 2, [1, 2])
        c = co.kwonly(x, 5, k=7, dtype=torch.float16)
        d, e = co.tuple_out(x, y)
        f = co.list_out(x, 3)
        g, h = co.optional_out(x, True)
        i, _ = co.int_out(x)
        j = co.mixed_out(x, 2)
        k = co.enum_defaults(x)
        return a, b, c, d, e, f[0], f[1], f[2], g, h, i, j[0], j[1][0], j[1][1], k


def eager_calls(x: torch.Tensor, y: torch.Tensor) -> list[tuple[torch._ops.OpOverload, tuple, dict]]:
    """The same calls as AllOps.forward, as (op, args, kwargs), in the same order."""
    args, kwargs = co.all_inputs_example(x, y)
    return [
        (co.all_inputs, args, kwargs),
        (co.scalars, (x, 2, [1, 2]), {}),
        (co.kwonly, (x, 5), {"k": 7, "dtype": torch.float16}),
        (co.tuple_out, (x, y), {}),
        (co.list_out, (x, 3), {}),
        (co.optional_out, (x, True), {}),
        (co.int_out, (x,), {}),
        (co.mixed_out, (x, 2), {}),
        (co.enum_defaults, (x,), {}),
    ]


def example_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return torch.randn(3, 4, generator=gen), torch.randn(3, 4, generator=gen)


def _key(model: type) -> str:
    text = inspect.getsource(co) + inspect.getsource(model) + torch.__version__
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def compiled_package(model: type = AllOps) -> Path:
    """Path of the AOTInductor package for `model` (compiled on first use, then cached)."""
    return cached(CACHE / f"{model.__name__}-{_key(model)}.pt2",
                  lambda path: compile_package(model(), example_inputs(), path))


def run_eager(model: type = AllOps) -> Any:
    return model()(*example_inputs())


class KwOnlyFixed(torch.nn.Module):
    """torch 2.13's kwarg-only desync: an op tagged needs_fixed_stride_order, kwarg-only defaults not passed."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return co.kwonly_fixed(x, 5)
