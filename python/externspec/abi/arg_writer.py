"""Python values written as Arguments by the call ABI's rules (docs/call-abi.md): the member each
schema type takes (`externspec.abi`'s tables), and the dynamic slots the value takes in the flat arrays.

Shared by the exporter (every argument of a call) and the executor (an op schema's default, written
as an exporter would write it, to compare with a spec's), so neither imports the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from pydantic import ValidationError

from .._generated.models import Argument, ComplexValue, OptionalTensorArgument, TensorArgument
from ..errors import UnsupportedError
from . import ArgType, torch_types


@dataclass
class Slots:
    ints: list[int] = field(default_factory=list)
    tensors: list[torch.Tensor] = field(default_factory=list)


class ArgWriter:
    """Writes one argument value as an Argument, appending its dynamic slots."""

    def __init__(self, tensor_name: Callable[[torch.Tensor], str] | None, op_name: str, arg_name: str,
                 at: ArgType, slots: Slots):
        self.tensor_name, self.op_name, self.arg_name, self.at, self.slots = tensor_name, op_name, arg_name, at, slots
        self.wrapped = False

    def fail(self, why: str) -> UnsupportedError:
        return UnsupportedError(f"{self.op_name}: argument `{self.arg_name}` of type `{self.at}`: {why}")

    def write(self, value: Any) -> Argument:
        try:
            return self._write(value)
        except ValidationError as exc:  # e.g. an int outside int64: the file format cannot hold it
            raise self.fail(f"{value!r} does not fit the file format: {exc.errors()[0]['msg']}") from None

    def _write(self, value: Any) -> Argument:
        at = self.at
        if value is None:
            if not at.optional:
                raise self.fail("got None for a non-optional argument")
            return Argument(as_none=True)
        if not at.supported:
            raise self.fail("the extern-kernel ABI cannot carry this type (only None can be written)")
        if at.is_list:
            if not isinstance(value, (list, tuple, torch.Size)):
                raise self.fail(f"expected a list, got {type(value).__name__}")
            return self.write_list(list(value))
        return self.write_one(value)

    def _name(self, t: torch.Tensor) -> str:
        if self.tensor_name is None:
            raise self.fail("a tensor here has no name to be written under")
        return self.tensor_name(t)

    def tensor(self, value: Any) -> TensorArgument:
        if isinstance(value, torch.Tensor):
            self.slots.tensors.append(value)
            return TensorArgument(name=self._name(value))
        if isinstance(value, (bool, int, float, complex)) and not self.at.is_list:
            # The dispatcher accepts a Python number for `Tensor` (a wrapped number).
            self.wrapped = True
            t = wrapped_number_tensor(value)
            self.slots.tensors.append(t)
            return TensorArgument(name=self._name(t))
        raise self.fail(f"expected a Tensor, got {type(value).__name__}")

    def write_one(self, v: Any) -> Argument:
        base = self.at.base
        if base == "Tensor":
            return Argument(as_tensor=self.tensor(v))
        if base in ("int", "SymInt"):
            if not is_int(v):
                raise self.fail(f"expected an int, got {type(v).__name__} {v!r}")
            self.slots.ints.append(int(v))
            return Argument(as_int=int(v))
        if base == "float":
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise self.fail(f"expected a float, got {type(v).__name__} {v!r}")
            return Argument(as_float=float(v))
        if base == "bool":
            if not isinstance(v, bool):
                raise self.fail(f"expected a bool, got {type(v).__name__} {v!r}")
            return Argument(as_bool=v)
        if base == "str":
            if not isinstance(v, str):
                raise self.fail(f"expected a str, got {type(v).__name__} {v!r}")
            return Argument(as_string=v)
        if base == "Scalar":
            return self.scalar(v)
        if base == "ScalarType":
            return Argument(as_scalar_type=self.enum(v, torch.dtype, torch_types.scalar_type_from_dtype))
        if base == "Layout":
            return Argument(as_layout=self.enum(v, torch.layout, torch_types.layout_from_torch))
        if base == "MemoryFormat":
            return Argument(as_memory_format=self.enum(v, torch.memory_format, torch_types.memory_format_from_torch))
        if base == "Device":
            if not isinstance(v, (torch.device, str)):
                raise self.fail(f"expected a device, got {type(v).__name__} {v!r}")
            return Argument(as_device=torch_types.device_from_torch(v))
        raise self.fail("the extern-kernel ABI cannot carry this type")

    def enum(self, v: Any, kind: type, convert: Any) -> Any:
        if not isinstance(v, kind):
            raise self.fail(f"expected a {kind.__name__}, got {type(v).__name__} {v!r}")
        try:
            return convert(v)
        except UnsupportedError as exc:
            raise self.fail(str(exc)) from None

    def scalar(self, v: Any) -> Argument:
        # bool first: it is an int subclass, but travels as a static bool (torch 2.13 puts it in the
        # int array, and the generated wrapper does not compile).
        if isinstance(v, bool):
            return Argument(as_bool=v)
        if is_int(v):
            self.slots.ints.append(int(v))
            return Argument(as_int=int(v))
        if isinstance(v, float):
            return Argument(as_float=v)
        if isinstance(v, complex):
            return Argument(as_complex=ComplexValue(real=v.real, imag=v.imag))
        raise self.fail(f"expected a number, got {type(v).__name__} {v!r}")

    def write_list(self, items: list[Any]) -> Argument:
        base = self.at.base
        if base == "Tensor" and self.at.elem_optional:
            if any(i is None for i in items):
                return Argument(as_optional_tensors=[
                    OptionalTensorArgument(as_none=True) if i is None
                    else OptionalTensorArgument(as_tensor=self.tensor(i))
                    for i in items
                ])
            return Argument(as_tensors=[self.tensor(i) for i in items])
        if base == "Tensor":
            return Argument(as_tensors=[self.tensor(i) for i in items])
        if base in ("int", "SymInt"):
            if not all(is_int(i) for i in items):
                raise self.fail(f"expected a list of ints, got {items!r}")
            ints = [int(i) for i in items]
            self.slots.ints.extend(ints)
            return Argument(as_ints=ints)
        if base == "float":
            if not all(isinstance(i, (int, float)) and not isinstance(i, bool) for i in items):
                raise self.fail(f"expected a list of floats, got {items!r}")
            return Argument(as_floats=[float(i) for i in items])
        if base == "bool":
            if not all(isinstance(i, bool) for i in items):
                raise self.fail(f"expected a list of bools, got {items!r}")
            return Argument(as_bools=items)
        if base == "str":
            if not all(isinstance(i, str) for i in items):
                raise self.fail(f"expected a list of str, got {items!r}")
            return Argument(as_strings=items)
        if base == "Scalar":
            if all(isinstance(i, bool) for i in items) and items:
                return Argument(as_bools=items)
            if all(is_int(i) and not isinstance(i, bool) for i in items):
                ints = [int(i) for i in items]
                self.slots.ints.extend(ints)
                return Argument(as_ints=ints)
            if all(isinstance(i, float) for i in items):
                return Argument(as_floats=items)
            raise self.fail(f"a Scalar[] must be all ints, all floats or all bools (one member), got {items!r}")
        raise self.fail("the extern-kernel ABI cannot carry this type")


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def wrapped_number_tensor(v: bool | int | float | complex) -> torch.Tensor:
    """The 0-dim tensor the dispatcher makes from a Python number (double/long/complex-double/bool)."""
    dtype = {bool: torch.bool, int: torch.int64, float: torch.float64, complex: torch.complex128}[type(v)]
    return torch.tensor(v, dtype=dtype)
