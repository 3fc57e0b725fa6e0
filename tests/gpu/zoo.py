"""The GPU check's zoo: small models compiled with AOTInductor for one device, in default and lite
mode. `--device cpu` (the dry mode) compiles the same models for the CPU, so this code runs on any
machine; on a GPU the custom op runs a CUDA kernel (compiled with torch.utils.cpp_extension)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

HERE = Path(__file__).resolve().parent

# The custom op: a dispatcher op (AOTInductor calls it through the proxy executor), with a CPU
# kernel and, for CUDA, a kernel launched on the current stream (the stream the runner makes current).
OP_CPP = r"""
#include <ATen/ATen.h>
#include <torch/library.h>

at::Tensor scale_add_cpu(const at::Tensor& x, const at::Tensor& y, double alpha) { return x + alpha * y; }

TORCH_LIBRARY(es_gpu, m) { m.def("scale_add(Tensor x, Tensor y, float alpha) -> Tensor"); }
TORCH_LIBRARY_IMPL(es_gpu, CPU, m) { m.impl("scale_add", &scale_add_cpu); }
"""

OP_CUDA = r"""
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

__global__ void scale_add_kernel(const float* x, const float* y, float alpha, float* out, int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = x[i] + alpha * y[i];
}

at::Tensor scale_add_cuda(const at::Tensor& x, const at::Tensor& y, double alpha) {
  TORCH_CHECK(x.scalar_type() == at::kFloat && y.scalar_type() == at::kFloat, "scale_add takes float32");
  TORCH_CHECK(x.sizes() == y.sizes(), "scale_add takes tensors of one shape");
  c10::cuda::CUDAGuard guard(x.device());
  at::Tensor xc = x.contiguous(), yc = y.contiguous(), out = at::empty_like(xc);
  const int64_t n = xc.numel();
  if (n > 0) {
    const int threads = 256;
    const auto blocks = static_cast<unsigned>((n + threads - 1) / threads);
    scale_add_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), yc.data_ptr<float>(), static_cast<float>(alpha), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return out;
}

TORCH_LIBRARY_IMPL(es_gpu, CUDA, m) { m.impl("scale_add", &scale_add_cuda); }
"""

_loaded: set[str] = set()


def load_op(device: str, build_dir: Path) -> None:
    """Compile (cached in build_dir) and load es_gpu::scale_add with the kernels for `device`
    (once per process: the op library registers the namespace)."""
    from torch.utils import cpp_extension

    if _loaded:
        if device not in _loaded:
            raise RuntimeError(f"es_gpu ops are loaded for {_loaded}, not {device}: one device per process")
        return
    cuda = device == "cuda"
    name = f"es_gpu_ops_{'cuda' if cuda else 'cpu'}"
    build_dir = build_dir / name
    build_dir.mkdir(parents=True, exist_ok=True)
    cpp_extension.load_inline(name=name, cpp_sources=[OP_CPP], cuda_sources=[OP_CUDA] if cuda else None,
                              is_python_module=False, build_directory=str(build_dir), with_cuda=cuda)

    @torch.library.register_fake("es_gpu::scale_add")
    def _(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
        return torch.empty_like(x)

    _loaded.add(device)


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class Encoder(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(64, 4, dim_feedforward=128, dropout=0.0, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x)


class CustomOp(torch.nn.Module):
    """A linear layer around the custom op: Triton or C-shim kernels beside an extern call."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(64, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.lin(x)
        return torch.relu(torch.ops.es_gpu.scale_add(h, x, 0.5))


class Chain(torch.nn.Module):
    """CALLS extern calls in a row on a small tensor: the per-call cost of the proxy executor."""

    CALLS = 32

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(self.CALLS):
            x = torch.ops.es_gpu.scale_add(x, x, 0.5)
        return x


@dataclass
class Case:
    name: str
    make: Callable[[], torch.nn.Module]
    shapes: tuple[tuple[int, ...], ...]  # the inputs' shapes (first: the compile-time example)
    dynamic_batch: bool = False
    blob: bool = False  # weights in an external *.wrapper_weights.blob
    needs_op: bool = False
    extern_calls: int = 0  # extern calls per forward, for the per-call cost
    modes: tuple[str, ...] = ("default", "lite")  # lite mode only where it changes what runs
    seed: int = 0
    _module: dict[str, torch.nn.Module] = field(default_factory=dict)

    def module(self, device: str) -> torch.nn.Module:
        if device not in self._module:
            torch.manual_seed(self.seed)
            self._module[device] = self.make().eval().to(device)
        return self._module[device]

    def inputs(self, device: str, variant: int = 0) -> tuple[torch.Tensor, ...]:
        g = torch.Generator().manual_seed(100 + variant)
        shape = self.shapes[variant]
        return (torch.randn(*shape, generator=g).to(device),)


CASES: dict[str, Case] = {c.name: c for c in [
    Case("mlp_dynamic_batch", MLP, ((8, 64), (33, 64)), dynamic_batch=True),
    Case("encoder_layer", Encoder, ((2, 16, 64),)),
    Case("custom_op", CustomOp, ((8, 64),), needs_op=True, extern_calls=1),
    Case("weights_blob", MLP, ((8, 64),), blob=True, modes=("default",)),
    Case("extern_chain", Chain, ((4, 16),), needs_op=True, extern_calls=Chain.CALLS, modes=("default",)),
]}


def package_path(case: Case, device: str, *, lite: bool, out_dir: Path) -> Path:
    return out_dir / f"{case.name}-{'lite' if lite else 'default'}-{device}-{_key(case, device, lite)}.pt2"


def compile_named(name: str, device: str, lite: bool, out_dir: Path) -> Path:
    """compile_case by name: the entry point of a compile worker process."""
    return compile_case(CASES[name], device, lite=lite, out_dir=out_dir)


def _key(case: Case, device: str, lite: bool) -> str:
    h = hashlib.sha256((HERE / "zoo.py").read_bytes())
    h.update(repr((case.name, device, lite, torch.__version__)).encode())
    return h.hexdigest()[:12]


def compile_case(case: Case, device: str, *, lite: bool, out_dir: Path) -> Path:
    """The package of `case` for `device` (compiled once, cached in out_dir by source and torch)."""
    path = package_path(case, device, lite=lite, out_dir=out_dir)
    if path.exists():
        return path
    if case.needs_op:
        load_op(device, out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    module = case.module(device)
    example = case.inputs(device)
    dynamic: Any = None
    if case.dynamic_batch:
        dynamic = ({0: torch.export.Dim("batch", min=2, max=1024)},)
    options: dict[str, Any] = dict(torch._inductor.lite_mode_options) if lite else {}
    if case.blob:
        options |= {"aot_inductor.package_constants_in_so": False,
                    "aot_inductor.package_constants_on_disk_format": "binary_blob"}
    with torch.no_grad():
        ep = torch.export.export(module, example, dynamic_shapes=dynamic)
        tmp = path.with_suffix(f".tmp{os.getpid()}.pt2")
        torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp), inductor_configs=options)
    tmp.replace(path)
    return path
