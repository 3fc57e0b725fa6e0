"""Real torch.library custom ops covering every argument and return type of the extern-kernel ABI.

One namespace, `externspec_test`, defined once per process on import. Each kernel mixes every
argument into its result with distinct weights, so a value delivered to the wrong argument (a
swapped slot, a lost default) changes the output. Every op has a fake (meta) implementation, so
AOTInductor can compile it and SpecBuilder can size list and optional returns.

The C++ executor tests reuse these ops (same names, same semantics).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

NS = "externspec_test"
_lib = torch.library.Library(NS, "DEF")


def _define(schema: str, impl: Callable[..., Any], fake: Callable[..., Any] | None = None,
            tags: Sequence[torch.Tag] = ()) -> torch._ops.OpOverload:
    name = schema.split("(", 1)[0]
    _lib.define(schema, tags=tuple(tags))
    _lib.impl(name, impl, "CompositeExplicitAutograd")
    qual = f"{NS}::{name.split('.')[0]}"
    torch.library.register_fake(qual, fake or impl, lib=_lib)
    packet = getattr(getattr(torch.ops, NS), name.split(".")[0])
    return getattr(packet, name.split(".")[1] if "." in name else "default")


def _num(x: Any) -> float:
    """A number standing for any static value, so every argument moves the result."""
    if x is None:
        return 0.0
    if isinstance(x, bool):
        return 0.5 + x
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, complex):
        return x.real + 2 * x.imag
    if isinstance(x, str):
        return float(sum(ord(c) for c in x) % 97)
    if isinstance(x, (list, tuple)):
        return sum((i + 1) * _num(v) for i, v in enumerate(x))
    return float(sum(ord(c) for c in str(x)) % 89)  # dtype, layout, memory format, device


def _all_inputs(tensor, tensors, optional_tensors, b8, b8s, i64, i64s, symint, symints, f64, f64s, scalar,
                scalars, string, strings, dtype, layout, memory_format, device, *, o_tensor=None, o_tensors=None,
                o_b8=None, o_i64=None, o_i64s=None, o_symint=None, o_f64=None, o_scalar=None, o_string=None,
                o_dtype=None, o_device=None):
    out = tensor * 1.0
    for k, t in enumerate(tensors):
        out = out + (k + 2) * t
    for k, t in enumerate(optional_tensors):
        if t is not None:
            out = out + (k + 5) * t
    if o_tensor is not None:
        out = out + 7 * o_tensor
    for k, t in enumerate(o_tensors or ()):
        out = out + (k + 11) * t
    statics = [b8, b8s, i64, i64s, symint, symints, f64, f64s, scalar, scalars, string, strings, dtype, layout,
               memory_format, device, o_b8, o_i64, o_i64s, o_symint, o_f64, o_scalar, o_string, o_dtype, o_device]
    bias = sum((k + 1) * 0.01 * (_num(v) % 1000) for k, v in enumerate(statics))
    return out + bias


all_inputs = _define(
    "all_inputs(Tensor tensor, Tensor[] tensors, Tensor?[] optional_tensors, bool b8, bool[] b8s, int i64, "
    "int[] i64s, SymInt symint, SymInt[] symints, float f64, float[] f64s, Scalar scalar, Scalar[] scalars, "
    "str string, str[] strings, ScalarType dtype, Layout layout, MemoryFormat memory_format, Device device, *, "
    "Tensor? o_tensor=None, Tensor[]? o_tensors=None, bool? o_b8=None, int? o_i64=None, int[]? o_i64s=None, "
    "SymInt? o_symint=None, float? o_f64=None, Scalar? o_scalar=None, str? o_string=None, "
    "ScalarType? o_dtype=None, Device? o_device=None) -> Tensor",
    _all_inputs,
)


def all_inputs_example(x: torch.Tensor, y: torch.Tensor) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Arguments for `all_inputs` exercising every type (both optional branches across the two sets)."""
    args = (x, [x, y], [None, y], False, [True, False], 42, [16, 17], 8, [8, 3], 3.14, [2.2, 3.3], 1.25, [45, 67],
            "hello", ["ab", "cde"], torch.float64, torch.strided, torch.channels_last, torch.device("cpu"))
    kwargs = dict(o_tensor=None, o_tensors=[x, y], o_b8=True, o_i64=None, o_i64s=[16, 17], o_symint=3, o_f64=2.5,
                  o_scalar=None, o_string="hi", o_dtype=torch.int64, o_device=None)
    return args, kwargs


def _scalars(x, s, ss, *, z=1.5):
    return x * _num(s) + _num(ss) + _num(z)


# Scalar carrying bool (torch 2.13: lands in the int array, wrapper fails to compile), int, float, complex.
scalars = _define("scalars(Tensor x, Scalar s, Scalar[] ss, *, Scalar z=1.5) -> Tensor", _scalars)


def _finite(v: float) -> float:
    if math.isnan(v):
        return 7.0
    return (1000.0 if v > 0 else -1000.0) if math.isinf(v) else v


def _floats(x, a, b, c):
    return x + sum((k + 1) * _finite(v) for k, v in enumerate((a, b, *c)))


# Non-finite floats (torch 2.13 writes "Infinity" and then fails to load it).
floats = _define("floats(Tensor x, float a, float b, float[] c) -> Tensor", _floats)


def _kwonly(x, p=2, *, k=3, f=1.5, s=4, dtype=None, mode="a"):
    out = x * p + k * 10 + f * 100 + s * 1000 + _num(mode)
    return out.to(dtype) if dtype is not None else out


# kwarg-only arguments with defaults (torch 2.13 desyncs the arrays when they are not passed).
kwonly = _define(
    "kwonly(Tensor x, int p=2, *, int k=3, float f=1.5, SymInt s=4, ScalarType? dtype=None, str mode='a') -> Tensor",
    _kwonly,
)
kwonly_fixed = _define(
    "kwonly_fixed(Tensor x, int p=2, *, int k=3, float f=1.5, SymInt s=4, ScalarType? dtype=None, "
    "str mode='a') -> Tensor",
    _kwonly,
    tags=(torch.Tag.needs_fixed_stride_order,),
)


def _enum_defaults(x, dtype=torch.int64, layout=torch.strided, memory_format=torch.contiguous_format):
    return x.to(dtype) + _num(dtype) + 0.01 * _num(layout) + 0.001 * _num(memory_format)


# Enum defaults, which torch reports in c10 numbering (long = 4 there, INT = 4 in the file format).
enum_defaults = _define(
    "enum_defaults(Tensor x, ScalarType dtype=long, Layout layout=strided, "
    "MemoryFormat memory_format=contiguous_format) -> Tensor",
    _enum_defaults,
)


def _tuple_out(x, y):
    return x + y, x - y


tuple_out = _define("tuple_out(Tensor x, Tensor y) -> (Tensor, Tensor)", _tuple_out)


def _list_out(x, n):
    return [x * (k + 1) for k in range(n)]


list_out = _define("list_out(Tensor x, int n) -> Tensor[]", _list_out)


def _optional_out(x, give):
    return x * 2, (x * 3 if give else None)


optional_out = _define("optional_out(Tensor x, bool give) -> (Tensor, Tensor?)", _optional_out)


def _int_out(x):
    return x + 1, x.shape[0] * 10 + 3


def _int_out_fake(x):
    return torch.empty_like(x), int(x.shape[0]) * 10 + 3


int_out = _define("int_out(Tensor x) -> (Tensor, int)", _int_out, _int_out_fake)


def _mixed_out(x, n):
    return x + 1, [x * (k + 2) for k in range(n)], None, 5


mixed_out = _define("mixed_out(Tensor x, int n) -> (Tensor, Tensor[], Tensor?, int)", _mixed_out)


def _add_into(x, out):
    out.copy_(x + out)


def _add_into_fake(x, out):
    return None


# A mutated argument and no return: `-> ()`.
add_into = _define("add_into(Tensor x, Tensor(a!) out) -> ()", _add_into, _add_into_fake)


def _scale_(x, alpha):
    return x.mul_(alpha)


# An in-place op whose return aliases its mutated input.
scale_ = _define("scale_(Tensor(a!) x, float alpha) -> Tensor(a!)", _scale_)


def _generator_arg(x, gen=None):
    return x + 1


# A type the ABI cannot carry (only None can be written for it).
generator_arg = _define("generator_arg(Tensor x, Generator? gen=None) -> Tensor", _generator_arg)


def _float_return(x):
    return float(x.sum())


float_return = _define("float_return(Tensor x) -> float", _float_return)
