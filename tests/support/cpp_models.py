"""Models compiled by real AOTInductor for the C++ executor tests, each compiled once and cached.

A few packages hold every case (an AOTInductor compile costs 1-2 minutes here):
* `abi`: the `externspec_test` custom ops over every argument type of the ABI table (tensors,
  lists, optional tensors, ints and SymInts from dynamic shapes, floats, bools, strings, dtypes,
  layouts, memory formats, devices, Scalars), every return kind, in-place and mutating ops, and
  ATen fallback ops that go through the proxy executor (not `scale_`: export cannot
  functionalize a custom op whose output aliases an input; the spec tests cover it). torch's own runner can run it, so
  outputs are compared three ways (eager, torch's runner, externspec's runner).
* `torch_defects`: float arguments of inf/-inf/NaN (torch 2.13 writes "Infinity" and then fails
  to load it) and an omitted enum default (written as a c10-numbered `as_int`, which torch's
  loader then rejects); compared with eager only, and torch's runner is shown to fail.
* `runner` and `runner_blob`: one small model for the package runner (weights, aliased and view
  outputs, the model's own value check, dtype/shape/stride checks on inputs), compiled with its
  weights in the library and, the second, in a `*.wrapper_weights.blob` beside it.
* `bool_index`: a bool input used as an index into a buffer (the runner's check of bool bytes).
* `int_index`: the same with an int64 index, whose bounds the generated code checks.
* `rank1`: an input and an output that are the batch dim alone (Triton's auto-complete).
* `extern_output`: one extern call (a custom op) on a 2048x2048 input (its rows dynamic) whose
  output a fused kernel then reads and writes: the wrapper records the output's size and stride
  after the call, the rows as the input's size symbol.

Packages are cached under `<cache>/aoti/<name>-<hash>.pt2`, keyed by this file, the custom ops
and the torch version, and built under a file lock so parallel workers compile once.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch.export import Dim

from externspec.cpp import cache_dir

from . import custom_ops as co
from .artifacts import read_member, replace_member
from .package_cache import cached, compile_package


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


class RunnerModel(torch.nn.Module):
    """What a package runner must get right: weights (in the library or in a blob beside it),
    outputs that alias (one tensor twice, a transposed view of another output), a value check of the
    model's own, and inputs of two dtypes, one with a bounded dynamic size.

    The view has another rank than its base (`y.t().unsqueeze(0)`, not `y.t()`): torch 2.15's
    AOTAutograd asks whether an output that views another output is a no-op view
    (`collect_metadata_analysis.py`, `has_same_metadata(o, o._base)`), and comparing `y.t()`'s sizes
    `(4, n)` with `y`'s `(n, 4)` guards `Eq(n, 4)` on the example batch 4, which specialised the batch
    to 4 (TORCH_LOGS=dynamic: `eval Eq(s77, 4) [guard added] ... in has_same_metadata`). Sizes of
    another rank compare unequal without a guard; 2.13 and 2.14 do not ask."""

    def __init__(self) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w = torch.nn.Parameter(torch.randn(4, 4, generator=g))
        self.register_buffer("b", torch.randn(4, generator=g))

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> tuple[torch.Tensor, ...]:
        torch._check(n.item() >= 3)
        y = x.sin()
        return y, y, y.t().unsqueeze(0), x @ self.w + self.b


class CatModel(torch.nn.Module):
    """torch's own test_dynamic_cat (`torch.cat([a, b])`, a's rows in [1, 10], b's in [1, 20]) with a
    third input whose rows start at 3: the wrapper records a minimum of 2 for the first two (the
    compiler's assumption about backed sizes, not the declared 1) and 3 for the third."""

    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return torch.cat([a, b, c], dim=0)


class IntAddModel(torch.nn.Module):
    """`int_tensor + python_int`: compiled in lite mode, torch 2.13 calls aoti_torch_cpu_add_Tensor
    with a float alpha, which ATen refuses for an int64 tensor on every run."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 2


class ExternOutputModel(torch.nn.Module):
    """An extern call whose output the next fused kernel overwrites: `y` is dead after `y * 2 + 1`,
    so the kernel writes its 2048x2048 result into the buffer the extern call returned."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return co.floats(x, 0.5, 2.0, [1.5]) * 2 + 1


@dataclass(frozen=True)
class CompiledModel:
    name: str
    module: torch.nn.Module
    example: Callable[[int], tuple[torch.Tensor, ...]]  # inputs for a given dynamic size n
    dynamic: dict[str, Any]
    inductor_configs: dict[str, Any] | None = None

    def inputs(self, n: int) -> tuple[torch.Tensor, ...]:
        return self.example(n)


class BoolIndexModel(torch.nn.Module):
    """A bool input used as an index (issue 54 item 1): `table[m.long()]` reads a row of a 2-row
    table, and the C++ compiler folds the bounds check of that read away (a bool is 0 or 1). Rows of
    4 on a dynamic batch: Triton serves it batched (tests/support/triton_models.py)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("table", torch.arange(8, dtype=torch.float32).reshape(2, 4))

    def forward(self, m: torch.Tensor) -> torch.Tensor:
        return self.table[m.long()] * 2


class IntIndexModel(BoolIndexModel):
    """An int64 input used as an index into the same 2-row table: the code Inductor generates checks
    its bounds (SECURITY.md, "Input values"), which the bool's lost."""

    def forward(self, m: torch.Tensor) -> torch.Tensor:
        return self.table[m] * 2


class Rank1Model(torch.nn.Module):
    """An input that is the batch dim alone (`idx: i64[B]`), and an output too (issue 54 item 8:
    Triton's auto-complete gave it `dims: []`, which Triton refuses)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("table", torch.arange(32, dtype=torch.float32).reshape(8, 4))

    def forward(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.table[idx] * 2, idx * 3


def _bool_inputs(n: int) -> tuple[torch.Tensor, ...]:
    return ((torch.arange(n * 4) % 3 == 0).reshape(n, 4),)


def _abi_inputs(n: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(n)
    x = torch.randn(n, 4, generator=g)
    y = torch.randn(n, 4, generator=g)
    z = torch.randn(5, 4, generator=g)
    return x, y, z


def _defects_inputs(n: int) -> tuple[torch.Tensor, ...]:
    return (torch.randn(n, 3, generator=torch.Generator().manual_seed(n)),)


def _runner_inputs(n: int) -> tuple[torch.Tensor, ...]:
    return torch.randn(n, 4, generator=torch.Generator().manual_seed(n)), torch.tensor(3 + n % 2)


def _cat_inputs(n: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(n)
    return torch.randn(n, 4, generator=g), torch.randn(n + 1, 4, generator=g), torch.randn(n + 2, 4, generator=g)


_RUNNER_DYNAMIC = {"x": {0: Dim("n", min=2, max=64)}, "n": None}


MODELS = {
    "abi": CompiledModel("abi", AbiModel(), _abi_inputs, {"x": {0: Dim("n", min=2)}, "y": {0: Dim("n", min=2)},
                                                          "z": None}),
    "torch_defects": CompiledModel("torch_defects", TorchDefectsModel(), _defects_inputs,
                                   {"x": {0: Dim("n", min=2)}}),
    "runner": CompiledModel("runner", RunnerModel(), _runner_inputs, _RUNNER_DYNAMIC),
    "runner_blob": CompiledModel("runner_blob", RunnerModel(), _runner_inputs, _RUNNER_DYNAMIC,
                                 {"aot_inductor.package_constants_in_so": False,
                                  "aot_inductor.package_constants_on_disk_format": "binary_blob"}),
    "int_add": CompiledModel("int_add", IntAddModel(), lambda n: (torch.arange(n),), {"x": None},
                             torch._inductor.lite_mode_options),
    "extern_output": CompiledModel("extern_output", ExternOutputModel(),
                                   lambda n: (torch.randn(2048, 2048, generator=torch.Generator().manual_seed(n)),),
                                   {"x": {0: Dim("rows", min=2, max=4096)}}),
    "bool_index": CompiledModel("bool_index", BoolIndexModel(), _bool_inputs, {"m": {0: Dim("n", min=2, max=1024)}}),
    "int_index": CompiledModel("int_index", IntIndexModel(), lambda n: (torch.arange(n * 4).reshape(n, 4) % 2,),
                               {"m": {0: Dim("n", min=2, max=1024)}}),
    "rank1": CompiledModel("rank1", Rank1Model(), lambda n: (torch.arange(n) % 8,),
                           {"idx": {0: Dim("n", min=2, max=64)}}),
    "cat": CompiledModel("cat", CatModel(), _cat_inputs, {"a": {0: Dim("dim0_a", min=1, max=10)},
                                                          "b": {0: Dim("dim0_b", min=1, max=20)},
                                                          "c": {0: Dim("dim0_c", min=3, max=8)}}),
}


def _key(model: CompiledModel) -> str:
    """Changes with the model's code, its example inputs, the custom ops and torch, nothing else."""
    h = hashlib.sha256()
    h.update(inspect.getsource(type(model.module)).encode())
    h.update(inspect.getsource(model.example).encode())
    h.update(repr(model.dynamic).encode())
    if model.inductor_configs:  # (the other packages keep their cached hashes)
        h.update(repr(model.inductor_configs).encode())
    h.update(Path(co.__file__).read_bytes())
    h.update(torch.__version__.encode())
    return h.hexdigest()[:16]


def package(name: str) -> Path:
    """The compiled package of model `name` (compiled on first use, then cached on disk)."""
    model = MODELS[name]
    return cached(cache_dir() / "aoti" / f"{name}-{_key(model)}.pt2",
                  lambda path: compile_package(model.module, model.inputs(4), path, dynamic_shapes=model.dynamic,
                                               inductor_configs=model.inductor_configs))


# Edits of the `extern_output` package's one extern call (`cm.extern_output_edited`): each an allowed
# op that returns what the compiled code after the call does not expect, the fused kernel then
# reading and writing the buffer as 2048x2048 float32 in place.
EXTERN_OUTPUT_EDITS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    # a 0-D tensor (issue 36 item 5: the kernel wrote 16 MiB past a 4-byte allocation)
    "0-D": ("aten::einsum", [{"name": "equation", "arg": {"as_string": "ij->"}, "kind": 1},
                             {"name": "tensors", "arg": {"as_tensors": ["X"]}, "kind": 1}]),
    # a bool 2048x2048 (issue 45 item 1: `aten::eq.Tensor`, a bool tensor of the recorded shape, made
    # the kernel write 16 MiB into a 4 MiB allocation)
    "bool": ("aten::logical_not", [{"name": "self", "arg": {"as_tensor": "X"}, "kind": 1}]),
    # the caller's input itself (issue 45 item 3: `aten::view_as` made the kernel write its result
    # into the caller's `x`)
    "alias": ("aten::alias", [{"name": "self", "arg": {"as_tensor": "X"}, "kind": 1}]),
}


def extern_output_edited(edit: str, out: Path) -> Path:
    """The `extern_output` package with its `*.wrapper.json` alone edited: its one extern call
    becomes the op of `EXTERN_OUTPUT_EDITS[edit]`, on the call's input tensor."""
    package_path = package("extern_output")
    spec = json.loads(read_member(package_path, ".wrapper.json"))
    (entry,) = spec["nodes"]
    node = entry["node"]
    x = node["inputs"][0]["arg"]["as_tensor"]
    target, inputs = EXTERN_OUTPUT_EDITS[edit]
    node["target"] = target
    node["inputs"] = json.loads(json.dumps(inputs).replace('"X"', json.dumps(x)))
    return replace_member(package_path, ".wrapper.json", json.dumps(spec).encode(), out)
