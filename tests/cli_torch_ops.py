"""Custom ops and a small model for the command-line tests.

Loaded twice: by the tests (to export and AOT-compile the model) and by `externspec inspect --load`
in a subprocess (so that the ops are registered there and their slots can be counted).
"""

from __future__ import annotations

import torch


@torch.library.custom_op("externspec_cli::scale_add", mutates_args=())
def scale_add(x: torch.Tensor, y: torch.Tensor, alpha: float, n: int) -> torch.Tensor:
    return x * alpha + y * n


@scale_add.register_fake
def _(x: torch.Tensor, y: torch.Tensor, alpha: float, n: int) -> torch.Tensor:
    return torch.empty_like(x)


@torch.library.custom_op("externspec_cli::split_bias", mutates_args=())
def split_bias(x: torch.Tensor, bias: torch.Tensor | None, sizes: list[int]) -> list[torch.Tensor]:
    y = x if bias is None else x + bias
    return [t.clone() for t in y.split(sizes, dim=1)]


@split_bias.register_fake
def _(x: torch.Tensor, bias: torch.Tensor | None, sizes: list[int]) -> list[torch.Tensor]:
    return [t.clone() for t in x.split(sizes, dim=1)]


class SmallModel(torch.nn.Module):
    """A linear layer, then the two custom ops (which AOTInductor calls through the proxy executor)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.register_buffer("bias", torch.arange(8, dtype=torch.float32))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = torch.ops.externspec_cli.scale_add(self.lin(x), y, 0.5, 3)
        a, b = torch.ops.externspec_cli.split_bias(z, self.bias, [3, 5])
        return torch.relu(a).sum(dim=1, keepdim=True) + b.mean()


def example_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return torch.randn(4, 8, generator=g), torch.randn(4, 8, generator=g)
