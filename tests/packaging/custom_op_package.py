"""An AOTInductor package whose extern calls go to a C++ custom op library: torch's own test ops
(`aoti_custom_ops::*` in torch/lib/libaoti_custom_ops.so, from torch's test/inductor/custom_ops.cpp),
so a process without Python (examples/run_package) can load the ops with dlopen.

Compiled once (about a minute on 2 cores) and cached under `<cache>/aoti/`, keyed by this file and
the torch version.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import torch

from externspec._cache import cache_dir

OPS_LIBRARY = Path(torch.__file__).parent / "lib" / "libaoti_custom_ops.so"
CACHE = cache_dir() / "aoti"


def load_ops() -> None:
    torch.ops.load_library(str(OPS_LIBRARY))


class TorchTestOps(torch.nn.Module):
    """Tensor, tuple and list returns of C++ custom ops, mixed with compiled ATen code."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        ops = torch.ops.aoti_custom_ops
        a = ops.custom_add(x, y)
        b, c = ops.fn_with_tuple_output(a, 2)
        d = ops.fn_with_list_output([b, c], 3)
        return ops.fn_square(d[0]) + c.sin(), d[1]


def example_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return torch.randn(3, 4, generator=gen), torch.randn(3, 4, generator=gen)


def package() -> Path:
    """The .pt2 of TorchTestOps (compiled on first use, then cached)."""
    load_ops()
    key = hashlib.sha256(Path(__file__).read_bytes() + torch.__version__.encode()).hexdigest()[:16]
    path = CACHE / f"torch_test_ops-{key}.pt2"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
            tmp_path = Path(tmp) / path.name
            ep = torch.export.export(TorchTestOps(), example_inputs())
            torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp_path))
            os.replace(tmp_path, path)
    return path
