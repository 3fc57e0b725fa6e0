"""torch's own AOTInductor custom-op C-shim test model (`test_custom_op_square` of torch's
`test/inductor/test_aot_inductor_custom_ops.py`), compiled once and cached.

The op `aoti_custom_ops::fn_square` comes from `torch/lib/libaoti_custom_ops.so`, a test library
torch's CPU wheels ship. `aot_inductor.custom_ops_to_c_shims` makes the compiled code call the op's
C shim `aoti_torch_cpu_fn_square` directly (no extern call, no `*.wrapper.json`), a function no
torch release has: the op library provides it, and `aot_inductor.custom_op_libs` links the model
library against it. externspec's release check must not take it for a newer torch's function.
"""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path

import pytest
import torch

from externspec._cache import cache_dir

from .package_cache import cached, compile_package

LIBRARY = "libaoti_custom_ops.so"
SHIM = "aoti_torch_cpu_fn_square"
_DECLARATION = "AOTITorchError aoti_torch_cpu_fn_square(AtenTensorHandle input, AtenTensorHandle* ret)"


def op_library() -> Path:
    """The op library, loaded into this process (`torch.ops.load_library`); skips where the torch
    wheel ships none (torch 2.14.1's CUDA wheel)."""
    path = Path(torch.__file__).parent / "lib" / LIBRARY
    if not path.exists():
        pytest.skip(f"torch {torch.__version__} ships no {LIBRARY}, the op library of torch's C-shim test model")
    torch.ops.load_library(path)
    return path


class Square(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.aoti_custom_ops.fn_square(x)


def example_inputs() -> tuple[torch.Tensor]:
    return (torch.randn(2, 3, generator=torch.Generator().manual_seed(0)),)


def c_shim_package() -> Path:
    """The package of `Square` compiled with the op's C shim (compiled on first use, then cached)."""
    op_library()
    key = hashlib.sha256((inspect.getsource(Square) + _DECLARATION + torch.__version__).encode()).hexdigest()[:16]
    configs = {"aot_inductor.custom_ops_to_c_shims": {torch.ops.aoti_custom_ops.fn_square.default: [_DECLARATION]},
               "aot_inductor.custom_op_libs": ["aoti_custom_ops"]}
    return cached(cache_dir() / "aoti" / f"c_shim_square-{key}.pt2",
                  lambda path: compile_package(Square(), example_inputs(), path, inductor_configs=configs))
