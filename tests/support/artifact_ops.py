"""torch.library custom ops used by the cached artifacts (namespace `externspec_art`).

Defined with torch.library.custom_op, so AOTInductor calls them through the proxy executor.
"""

from __future__ import annotations

import torch


@torch.library.custom_op("externspec_art::scale_add", mutates_args=())
def scale_add(x: torch.Tensor, y: torch.Tensor, alpha: float, dims: list[int], mode: str,
              bias: torch.Tensor | None) -> torch.Tensor:
    out = x + alpha * y
    out = out.mean(dim=dims, keepdim=True) + out if mode == "mean" else out
    return out if bias is None else out + bias


@scale_add.register_fake
def _(x, y, alpha, dims, mode, bias):  # type: ignore[no-untyped-def]
    return torch.empty_like(x)


@torch.library.custom_op("externspec_art::cast_sum", mutates_args=())
def cast_sum(x: torch.Tensor, dtype: torch.dtype, others: list[torch.Tensor], scale: float) -> torch.Tensor:
    total = x.to(dtype)
    for t in others:
        total = total + scale * t.to(dtype)
    return total


@cast_sum.register_fake
def _(x, dtype, others, scale):  # type: ignore[no-untyped-def]
    return torch.empty_like(x, dtype=dtype)
