"""The extern-kernel call ABI (docs/call-abi.md): which Argument members each op-schema type
accepts, which of them take slots in the flat int/tensor arrays, and what a return is written as.

The tables themselves are IDL constants (`ABI_*` in schema/externspec.thrift), generated into the
Python models and into the C++ header, so the exporter, both executors and `inspect` judge a node by
the same data; this module only decomposes torch types and answers questions against the tables.
It never imports torch: the executors' node layout (layout.py) asks it about types torch handed it.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from .._generated import models
from .._generated.models import Argument
from ..messages import message

BASE_OF_TYPE_KIND: dict[str, str] = dict(models.ABI_BASE_OF_TYPE_KIND)
INPUT_MEMBERS: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in models.ABI_INPUT_MEMBERS.items()}
RETURN_MEMBERS: dict[str, str] = dict(models.ABI_RETURN_MEMBERS)
ENUM_BASES = frozenset(models.ABI_ENUM_TYPES)
INT_SLOT_MEMBERS = frozenset(models.ABI_INT_SLOT_MEMBERS)
TENSOR_SLOT_MEMBERS = frozenset(models.ABI_TENSOR_SLOT_MEMBERS)

# Node metadata keys (exporter writes them, executors read them).
OP_SCHEMA_KEY: str = models.METADATA_OP_SCHEMA
WRAPPED_NUMBERS_KEY: str = models.METADATA_WRAPPED_NUMBERS
CUSTOM_OP_KEY: str = models.METADATA_TORCH_CUSTOM_OP


@dataclass(frozen=True)
class ArgType:
    """One op-schema type, decomposed: `Tensor?[]` is base Tensor, list, optional elements."""

    base: str
    is_list: bool = False
    optional: bool = False  # `T?` / `T[]?`: None is allowed
    elem_optional: bool = False  # `T?[]`

    def __str__(self) -> str:
        return self.spelling + ("?" if self.optional else "")

    @property
    def spelling(self) -> str:
        """The type without its outer `?`: the key of the input table."""
        return self.base + ("?" if self.elem_optional else "") + ("[]" if self.is_list else "")

    @property
    def members(self) -> tuple[str, ...]:
        """Argument members a non-None value of this type may be written as ((): unsupported)."""
        return INPUT_MEMBERS.get(self.spelling, ())

    @property
    def supported(self) -> bool:
        return bool(self.members)

    @property
    def is_enum(self) -> bool:
        return not self.is_list and self.base in ENUM_BASES

    @property
    def return_member(self) -> str | None:
        """The output member of this return type, None if the ABI cannot return it."""
        return RETURN_MEMBERS.get(str(self))


def arg_type(jit_type: Any) -> ArgType:
    """Decompose a torch JIT type (`schema_arg.real_type`, which keeps SymInt and ScalarType apart
    from int) into an ArgType. Unknown kinds keep their torch spelling as the base."""
    optional = elem_optional = is_list = False
    t = jit_type
    if t.kind() == "OptionalType":
        optional, t = True, t.getElementType()
    if t.kind() == "ListType":
        is_list, t = True, t.getElementType()
        if t.kind() == "OptionalType":
            elem_optional, t = True, t.getElementType()
    base = BASE_OF_TYPE_KIND.get(t.kind(), str(t))
    if base == "NoneType" and (optional or is_list):
        base = str(t)
    return ArgType(base, is_list, optional, elem_optional)


def accepts(at: ArgType, member: str) -> bool:
    """Whether an input of schema type `at` may be written as Argument member `member`."""
    return (member == "as_none" and at.optional) or member in at.members


class SlotKind(enum.StrEnum):
    """Where an argument's value travels (C++: `SlotKind` in cpp/csrc/executor/abi.h): the int array,
    the tensor array, neither (a static value decoded at load), or nowhere at all (DEFAULT: omitted,
    the op's own default; a layout's kind only). Its values are the words `inspect` prints."""

    INT = "int"
    TENSOR = "tensor"
    STATIC = "static"
    DEFAULT = "default"


def slot_kind(at: ArgType, member: str) -> SlotKind:
    """Which array an input of type `at` written as `member` travels in: INT, TENSOR or STATIC."""
    if member in INT_SLOT_MEMBERS and not at.is_enum:
        return SlotKind.INT
    return SlotKind.TENSOR if member in TENSOR_SLOT_MEMBERS else SlotKind.STATIC


def return_slots(out: Argument) -> tuple[int, int]:
    """(int slots, tensor slots) one output takes (the tensor ones follow the inputs' in the array)."""
    member = out.type
    if member == "as_optional_tensor":
        return 0, int(out.unwrap("as_optional_tensor").type == "as_tensor")
    if member in TENSOR_SLOT_MEMBERS:
        return 0, len(out.value) if isinstance(out.value, list) else 1
    return (1, 0) if member in INT_SLOT_MEMBERS else (0, 0)


def same_argument(a: Argument, b: Argument) -> bool:
    """Whether two Arguments hold the same member and value (NaN equals NaN: a default of nan)."""
    if a.type != b.type:
        return False
    va, vb = a.value, b.value
    if isinstance(va, float) and isinstance(vb, float) and math.isnan(va) and math.isnan(vb):
        return True
    return bool(va == vb)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TORCH_OPS = "torch.ops."


class OpName(NamedTuple):
    """A node's target, taken apart: `aten::add.Tensor` is ("aten", "add", "Tensor")."""

    namespace: str
    name: str
    overload: str  # "default" where the target names none

    @property
    def qualified(self) -> str:
        """`ns::name.overload`, the spelling of the op policy and of error messages."""
        return f"{self.namespace}::{self.name}.{self.overload}"


def split_target(target: str) -> OpName:
    """`ns::op`, `ns::op.overload` (extern-kernel files) or `torch.ops.ns.op.overload` (exported
    programs) -> its parts; ValueError for anything else.

    Every part must be an identifier and not a dunder, so that looking the parts up (in the
    dispatcher's registry, or as attributes of torch.ops) never reaches anything but an op. The C++
    executor's `resolve_op` (cpp/csrc/executor/ops.cpp) parses by the same grammar; tests/abi/test_op_lookup.py
    runs both over the same targets."""
    if target.startswith(_TORCH_OPS):
        parts = target[len(_TORCH_OPS):].split(".")
        if len(parts) != 3:
            parts = []
    else:
        ns, sep, rest = target.partition("::")
        name, dot, overload = rest.partition(".")
        parts = [ns, name, overload if dot else "default"] if sep else []
    if not parts or not all(_IDENT.match(p) and not p.startswith("__") for p in parts):
        raise ValueError(message("NOT_AN_OP_TARGET", target=target))
    return OpName(*parts)
