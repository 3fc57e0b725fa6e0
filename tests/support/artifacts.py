"""Real torch 2.13 artifacts for the tests, made by torch itself and cached on disk.

torch.export archives take seconds to make and an AOTInductor package takes minutes on two
cores, so each is built once and kept under `.cache/artifacts/`, keyed by the torch version and
the text of this file and the ops module: editing either rebuilds them.
"""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from externspec._cache import cache_dir

from . import artifact_ops
from .package_cache import cached

CACHE = cache_dir() / "artifacts"


def _key(key_files: Sequence[Path] = ()) -> str:
    h = hashlib.sha256(torch.__version__.encode())
    for module in (__file__, artifact_ops.__file__, *key_files):
        h.update(Path(module).read_bytes())
    return h.hexdigest()[:16]


def _cached(name: str, build: Callable[[Path], None], key_files: Sequence[Path] = ()) -> Path:
    """`name` built into the cache once (package_cache.cached), keyed by this file, the ops module
    and `key_files` (the module defining what `build` makes)."""
    return cached(CACHE / _key(key_files) / name, build)


class MLP(torch.nn.Module):
    """Parameters, a buffer (batch norm) and plain ATen ops."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = torch.nn.Linear(8, 16)
        self.bn = torch.nn.BatchNorm1d(16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.nn.functional.gelu(self.bn(self.fc1(x))))


class Dynamic(torch.nn.Module):
    """Symbolic sizes: reshape, cat and sum over a dynamic batch."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = torch.cat([x, y], dim=0)
        return z.reshape(z.shape[0], -1).sum(dim=1, keepdim=True) + x.shape[0]


class CustomOps(torch.nn.Module):
    """torch.library custom ops with floats, lists, strings, optional tensors and dtypes."""

    def forward(self, x: torch.Tensor, y: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        a = torch.ops.externspec_art.scale_add(x, y, 2.5, [0, 1], "mean", bias)
        return torch.ops.externspec_art.cast_sum(a, torch.float64, [x, y], -0.5)


class Cond(torch.nn.Module):
    """A higher-order op: its branches serialize as nested graphs (as_graph)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))


def _inputs(name: str) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(1)
    shapes = {
        "mlp": [(5, 8)],
        "dynamic": [(3, 4), (2, 4)],
        "custom_ops": [(4, 8), (4, 8), (4, 8)],
        "cond": [(3, 3)],
    }[name]
    return tuple(torch.randn(*s, generator=g) for s in shapes)


EXPORT_MODELS: dict[str, Callable[[], torch.nn.Module]] = {
    "mlp": lambda: MLP().eval(),
    "dynamic": Dynamic,
    "custom_ops": CustomOps,
    "cond": Cond,
}


def _dynamic_shapes(name: str):  # type: ignore[no-untyped-def]
    if name == "dynamic":
        b = torch.export.Dim("b", min=2, max=64)
        return ({0: b}, {0: torch.export.Dim("c", min=2, max=64)})
    if name == "custom_ops":
        b = torch.export.Dim("b", min=2, max=64)
        return ({0: b}, {0: b}, {0: b})
    return None


def example(name: str) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    """The eager module and the example inputs of an exported model."""
    return EXPORT_MODELS[name](), _inputs(name)


def exported_program(name: str) -> Path:
    """A torch.export.save archive (.pt2) of one of EXPORT_MODELS."""

    def build(path: Path) -> None:
        module, inputs = example(name)
        ep = torch.export.export(module, inputs, dynamic_shapes=_dynamic_shapes(name))
        torch.export.save(ep, path)

    return _cached(f"export_{name}.pt2", build)


def aoti_package() -> Path:
    """An AOTInductor package of the CustomOps model (dynamic batch): its *.wrapper.json is a
    torch-written extern-kernel file."""

    def build(path: Path) -> None:
        ep = torch.export.load(exported_program("custom_ops"))
        torch._inductor.aoti_compile_and_package(ep, package_path=str(path))

    return _cached("aoti_custom_ops.pt2", build)


def archive_member(archive: Path, suffix: str) -> str:
    """The name of the one member of a zip archive ending with `suffix`."""
    names = [n for n in zipfile.ZipFile(archive).namelist() if n.endswith(suffix)]
    if len(names) != 1:
        raise LookupError(f"{archive}: expected one member ending with {suffix}, found {names}")
    return names[0]


def read_member(archive: Path, suffix: str) -> bytes:
    with zipfile.ZipFile(archive) as z:
        return z.read(archive_member(archive, suffix))


def replace_member(archive: Path, suffix: str, data: bytes, out: Path) -> Path:
    """Copy `archive` to `out` with the member ending in `suffix` replaced by `data`."""
    target = archive_member(archive, suffix)
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            dst.writestr(info, data if info.filename == target else src.read(info.filename))
    return out


