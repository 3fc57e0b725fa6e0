"""Models compiled by real AOTInductor for the C++ executor tests, each compiled once and cached.

Two packages hold every case (an AOTInductor compile costs 1-2 minutes here):
* `abi`: the `externspec_test` custom ops over every argument type of the ABI table (tensors,
  lists, optional tensors, ints and SymInts from dynamic shapes, floats, bools, strings, dtypes,
  layouts, memory formats, devices, Scalars), every return kind, in-place and mutating ops, and
  ATen fallback ops that go through the proxy executor (not `scale_`: export cannot
  functionalize a custom op whose output aliases an input; the spec tests cover it). torch's own runner can run it, so
  outputs are compared three ways (eager, torch's runner, externspec's runner).
* `torch_defects`: float arguments of inf/-inf/NaN (torch 2.13 writes "Infinity" and then fails
  to load it) and an omitted enum default (written as a c10-numbered `as_int`, which torch's
  loader then rejects); compared with eager only, and torch's runner is shown to fail.

Packages are cached under `<cache>/aoti/<name>-<hash>.pt2`, keyed by this file, the custom ops
and the torch version, and built under a file lock so parallel workers compile once.
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch.export import Dim

from externspec.cpp import cache_dir

from . import custom_ops as co


class AbiModel(torch.nn.Module):
    """Every ABI argument type and return kind, in one graph of extern calls."""

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> tuple[torch.Tensor, ...]:
        n = x.shape[0]  # dynamic: SymInt arguments below are computed by the wrapper
        a = co.all_inputs(
            x, [x, y], [None, y], False, [True, False], 42, [16, 17], n, [n, 3], 3.14, [2.2, 3.3], 9, [45, 67],
            "hello", ["ab", "cde"], torch.float64, torch.strided, torch.channels_last, torch.device("cpu"),
            o_tensor=y, o_tensors=[x, y], o_b8=True, o_i64=7, o_i64s=[16, 17], o_symint=n + 1, o_f64=2.5,
            o_scalar=-4.5, o_string="hi", o_dtype=torch.int64, o_device=torch.device("cpu"))
        b = co.all_inputs(
            y, [x], [x, None], True, [], -3, [], n * 2, [], -0.5, [], 1.75, [0.5, 0.25],
            "", [], torch.float32, torch.strided, torch.contiguous_format, torch.device("cpu"),
            o_tensor=None, o_tensors=None, o_b8=None, o_i64=None, o_i64s=None, o_symint=None, o_f64=None,
            o_scalar=None, o_string=None, o_dtype=None, o_device=None)
        # A SymInt passed as Scalar fails torch 2.13's wrapper codegen (pytorch#193767): ints only.
        s = co.scalars(x, 5, [1, 2], z=2.5)
        s2 = co.scalars(y, 0.75, [1.5, 2.5], z=-3)
        k = co.kwonly(x, 5, k=7, f=0.5, s=n, dtype=torch.float64, mode="b")
        e2 = co.enum_defaults(x, torch.int32, torch.strided, torch.channels_last)
        t1, t2 = co.tuple_out(x, y)
        lst = co.list_out(y, 3)
        o1, o2 = co.optional_out(x, True)
        p1, p2 = co.optional_out(y, False)
        i1, i2 = co.int_out(z)
        m1, m2, m3, m4 = co.mixed_out(x, 2)
        acc = y.clone()
        co.add_into(x, acc)
        med_v, med_i = torch.median(x, dim=1)
        nmed_v, nmed_i = torch.nanmedian(y, dim=0, keepdim=True)
        assert p2 is None and m3 is None
        return (a, b, s, s2, k, e2, t1, t2, *lst, o1, o2, p1, i1 * i2, m1, *m2, m4 * z, acc,
                med_v, med_i, nmed_v, nmed_i)


class TorchDefectsModel(torch.nn.Module):
    """Calls torch 2.13 compiles but its own runner cannot load (docs/torch-defects.md)."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a = co.floats(x, float("inf"), float("nan"), [float("-inf"), 1.0])
        b = co.floats(a, -float("inf"), 0.5, [float("nan")])
        c = co.scalars(b, float("inf"), [1.5], z=float("-inf"))
        # An omitted enum default is written as a c10-numbered `as_int`, which torch then rejects.
        return c, co.enum_defaults(x)


@dataclass(frozen=True)
class CompiledModel:
    name: str
    module: torch.nn.Module
    example: Callable[[int], tuple[torch.Tensor, ...]]  # inputs for a given dynamic size n
    dynamic: dict[str, Any]
    torch_runner_works: bool

    def inputs(self, n: int) -> tuple[torch.Tensor, ...]:
        return self.example(n)


def _abi_inputs(n: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(n)
    x = torch.randn(n, 4, generator=g)
    y = torch.randn(n, 4, generator=g)
    z = torch.randn(5, 4, generator=g)
    return x, y, z


def _defects_inputs(n: int) -> tuple[torch.Tensor, ...]:
    return (torch.randn(n, 3, generator=torch.Generator().manual_seed(n)),)


MODELS = {
    "abi": CompiledModel("abi", AbiModel(), _abi_inputs, {"x": {0: Dim("n", min=2)}, "y": {0: Dim("n", min=2)},
                                                          "z": None}, True),
    "torch_defects": CompiledModel("torch_defects", TorchDefectsModel(), _defects_inputs,
                                   {"x": {0: Dim("n", min=2)}}, False),
}


def _key(model: CompiledModel) -> str:
    """Changes with the model's code, its example inputs, the custom ops and torch, nothing else."""
    h = hashlib.sha256()
    h.update(inspect.getsource(type(model.module)).encode())
    h.update(inspect.getsource(model.example).encode())
    h.update(repr(model.dynamic).encode())
    h.update(Path(co.__file__).read_bytes())
    h.update(torch.__version__.encode())
    return h.hexdigest()[:16]


def package(name: str) -> Path:
    """The compiled package of model `name` (compiled on first use, then cached on disk)."""
    model = MODELS[name]
    out_dir = cache_dir() / "aoti"
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}-{_key(model)}.pt2"
    with open(out_dir / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            with warnings.catch_warnings():
                # torch's own pytree code trips its own deprecation while exporting.
                warnings.filterwarnings("ignore", r".*LeafSpec", FutureWarning)
                ep = torch.export.export(model.module, model.inputs(4), dynamic_shapes=model.dynamic)
                tmp = path.with_suffix(".tmp.pt2")
                torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp))
            tmp.rename(path)
    return path
