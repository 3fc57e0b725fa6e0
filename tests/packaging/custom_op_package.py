"""An AOTInductor package whose extern calls go to a C++ custom op library: tests/packaging/my_ops.cpp
(`my_ops::*`), compiled against the installed torch, so a process without Python
(examples/run_package) can load the ops with dlopen.

The library and the package are built once (about a minute on 2 cores) and cached under
`<cache>/aoti/`, keyed by their sources and the torch version.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import torch

from externspec._cache import cache_dir
from tests.support.cppbuild import build
from tests.support.package_cache import cached, compile_package

SOURCE = Path(__file__).with_name("my_ops.cpp")
CACHE = cache_dir() / "aoti"


def op_library(source: Path, name: str, optimize: str = "-O1") -> Path:
    """lib<name>.so of an op library's `source`, for the installed torch (its headers and libraries,
    its C++ ABI flag), cached under `<cache>/cpp/<name>`; `optimize` another level makes another
    build of the same library (other bytes, the same namespaces)."""
    torch_dir = Path(torch.__file__).parent
    flags = ["-std=c++20", optimize, "-shared", "-fPIC", f"-I{torch_dir / 'include'}",
             f"-D_GLIBCXX_USE_CXX11_ABI={int(torch.compiled_with_cxx11_abi())}", f"-L{torch_dir / 'lib'}",
             f"-Wl,-rpath,{torch_dir / 'lib'}", "-ltorch_cpu", "-lc10"]
    return build(source, cache_dir() / "cpp" / name, f"lib{name}", flags, extra_deps=[torch_dir / "version.py"])


@functools.cache
def ops_library() -> Path:
    """libmy_ops.so for the installed torch."""
    return op_library(SOURCE, "my_ops")


def load_ops() -> None:
    torch.ops.load_library(str(ops_library()))


class MyOps(torch.nn.Module):
    """Tensor, tuple and list returns of C++ custom ops, mixed with compiled ATen code."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        ops = torch.ops.my_ops
        a = ops.add(x, y)
        b, c = ops.tuple_out(a, 2)
        d = ops.list_out([b, c], 3)
        return ops.square(d[0]) + c.sin(), d[1]


def example_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return torch.randn(3, 4, generator=gen), torch.randn(3, 4, generator=gen)


def package() -> Path:
    """The .pt2 of MyOps (compiled on first use, then cached)."""
    load_ops()
    h = hashlib.sha256(Path(__file__).read_bytes() + SOURCE.read_bytes() + torch.__version__.encode())
    key = h.hexdigest()[:16]
    return cached(CACHE / f"my_ops-{key}.pt2", lambda path: compile_package(MyOps(), example_inputs(), path))
