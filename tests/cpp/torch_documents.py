"""Real torch-written documents for the conformance tests, produced once and cached in .cache/.

* `wrapper.json`: AOTInductor's extern-kernel file, from `torch._inductor.aoti_compile_and_package`
  on a model calling a torch.library custom op (which AOTInductor must call through the proxy
  executor) next to ordinary aten ops.
* `model.json`: torch.export's serialized program (`torch.export.save`) of the same model, with a
  dynamic batch dimension (symbolic sizes in its TensorMeta).
"""

from __future__ import annotations

import io
import os
import warnings
import zipfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "torch_docs" / torch.__version__.replace("+", "_")


@torch.library.custom_op("externspec_conformance::scale_add", mutates_args=())
def scale_add(x: torch.Tensor, y: torch.Tensor, alpha: float, dims: list[int], mode: str,
              bias: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    out = x + alpha * y
    if bias is not None:
        out = out + bias
    return out, out.sum(dim=dims, keepdim=True).expand_as(out).clone() if mode == "sum" else out.clone()


@scale_add.register_fake
def _(x, y, alpha, dims, mode, bias):  # type: ignore[no-untyped-def]
    return torch.empty_like(x), torch.empty_like(x)


class Model(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a, c = scale_add(x.relu(), y, 2.5, [0, 1], "sum", b)
        return (a * c).sin()


def _inputs() -> tuple[torch.Tensor, ...]:
    return (torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 8))


def _exported() -> torch.export.ExportedProgram:
    batch = torch.export.Dim("batch", min=2, max=64)
    return torch.export.export(Model(), _inputs(), dynamic_shapes=({0: batch}, {0: batch}, {0: batch}))


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return path


def model_json() -> Path:
    """torch.export's models/model.json of Model (cached)."""
    path = CACHE / "model.json"
    if not path.exists():
        buf = io.BytesIO()
        torch.export.save(_exported(), buf)
        with zipfile.ZipFile(buf) as z:
            (name,) = [n for n in z.namelist() if n.endswith("models/model.json")]
            _write(path, z.read(name))
    return path


def wrapper_json() -> Path:
    """AOTInductor's *.wrapper.json of Model (compiled once, cached)."""
    path = CACHE / "wrapper.json"
    if not path.exists():
        package = CACHE / "model.pt2"
        package.parent.mkdir(parents=True, exist_ok=True)
        with warnings.catch_warnings():
            # torch's own pytree deprecation warnings, raised from inside the compiler
            warnings.simplefilter("ignore", FutureWarning)
            torch._inductor.aoti_compile_and_package(_exported(), package_path=str(package))
        with zipfile.ZipFile(package) as z:
            (name,) = [n for n in z.namelist() if n.endswith(".wrapper.json")]
            _write(path, z.read(name))
    return path
