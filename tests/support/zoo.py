"""Whole models a user would try, compiled with AOTInductor in lite mode (`lite_mode_options`:
every op without a C shim falls back to the proxy executor, so most of a model's arithmetic runs
through extern-kernel nodes torch wrote). Tiny sizes; each package is compiled once and cached
(artifacts._cached, keyed by this file's text and the torch version).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .artifacts import _cached
from .package_cache import compile_package


class MLP(torch.nn.Module):
    """Two linear layers (addmm), GELU and softmax."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.fc2(torch.nn.functional.gelu(self.fc1(x))), dim=-1)


class ConvBN(torch.nn.Module):
    """Convolution, batch norm (eval: running statistics), ReLU, max pooling."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.bn.running_mean.uniform_(-0.5, 0.5)
        self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)


class GRU(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gru = torch.nn.GRU(8, 16, batch_first=True)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out, h = self.gru(x)
        return out, h


class MaskedAttention(torch.nn.Module):
    """Multi-head self-attention with a boolean attention mask given as an input."""

    def __init__(self) -> None:
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.attn(x, x, x, attn_mask=mask, need_weights=False)[0]


class Bag(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(20, 8, mode="mean")

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.bag(idx)


class IndexSort(torch.nn.Module):
    """topk, sort, gather and index_select (int64 outputs too)."""

    def forward(self, x: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor, ...]:
        values, indices = x.topk(3, dim=-1)
        ordered, order = x.sort(dim=-1, descending=True)
        return values, indices, ordered, x.gather(1, order[:, :2]), x.index_select(0, idx)


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))


@dataclass(frozen=True)
class ZooModel:
    name: str
    make: Callable[[], torch.nn.Module]
    inputs: Callable[[int], tuple[torch.Tensor, ...]]  # size variant 0 (compiled at) or 1
    dynamic_shapes: Any = None  # torch.export dynamic_shapes; None: static

    @property
    def dynamic(self) -> bool:
        return self.dynamic_shapes is not None

    def module(self) -> torch.nn.Module:
        torch.manual_seed(0)
        return self.make().eval()


def _mask(n: int) -> torch.Tensor:
    return torch.ones(n, n, dtype=torch.bool).triu(1)  # True = not attended (causal)


ZOO = {
    m.name: m
    for m in [
        ZooModel("transformer", lambda: torch.nn.TransformerEncoderLayer(32, 4, 64, batch_first=True),
                 lambda v: (_randn(2, 5, 32),)),
        ZooModel("mlp", MLP, lambda v: (_randn((4, 7)[v], 16),),
                 ({0: torch.export.Dim("batch", min=2, max=64)},)),
        ZooModel("conv_bn", ConvBN, lambda v: (_randn(2, 3, 8, 8),)),
        ZooModel("gru", GRU, lambda v: (_randn(2, 5, 8),)),
        ZooModel("masked_attention", MaskedAttention, lambda v: (_randn(2, 6, 16), _mask(6))),
        ZooModel("embedding_bag", Bag, lambda v: (torch.tensor([[1, 4, 4, 19], [0, 2, 7, 3], [5, 5, 6, 11]]),)),
        ZooModel("index_sort", IndexSort, lambda v: (_randn(4, 6), torch.tensor([2, 0, 3]))),
    ]
}


def lite_package(name: str) -> Path:
    """The lite-mode AOTInductor package of ZOO[name] (compiled on first use, then cached)."""
    model = ZOO[name]

    def build(path: Path) -> None:
        compile_package(model.module(), model.inputs(0), path, dynamic_shapes=model.dynamic_shapes,
                        inductor_configs=dict(torch._inductor.lite_mode_options))

    return _cached(f"lite_{name}.pt2", build, key_files=(Path(__file__),))


# What torch's own runner does on a lite-mode package whose addmm omits the kwarg-only beta/alpha
# (docs/torch-compat.md): 2.13 and 2.14 raise this; 2.11 and 2.12 give no eager result either (the
# MLP's output comes back None, the transformer layer's run raises); from 2.15, whose wrapper and
# runner no longer pass them, it runs the package its release compiled equal to eager.
TORCH_RUNNER_LITE_ERROR = {(2, 13): "Mismatch between ints consumed and num_ints",
                           (2, 14): "Mismatch between ints consumed and num_ints"}
TORCH_RUNNER_RUNS_LITE_SINCE = (2, 15)


def assert_torchs_runner_as_its_release_does(path: Path, inputs: tuple[torch.Tensor, ...], want: torch.Tensor) -> None:
    """torch's runner on the lite-mode package at `path` (compiled by the running torch) as its release
    does: up to 2.14 no eager result, in that release's way; from 2.15 eager's result."""
    release = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    if release >= TORCH_RUNNER_RUNS_LITE_SINCE:
        torch.testing.assert_close(torch._inductor.aoti_load_package(str(path))(*inputs), want, rtol=1e-4, atol=1e-5)
        return
    try:
        theirs = torch._inductor.aoti_load_package(str(path))(*inputs)
    except RuntimeError as exc:
        assert TORCH_RUNNER_LITE_ERROR.get(release, "") in str(exc)
    else:
        assert release not in TORCH_RUNNER_LITE_ERROR
        assert not (isinstance(theirs, torch.Tensor) and torch.allclose(theirs, want, rtol=1e-4, atol=1e-5))
