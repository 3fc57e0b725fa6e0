"""The extern-kernel call ABI as data: schema argument types, the Argument members each accepts,
and which members take slots in the flat int/tensor arrays (docs/call-abi.md).

Both sides use it: the exporter (`export.py`) to write a node and count slots, the executor
(`runtime.py`) to validate a node against the runtime op schema and plan the slicing. Keeping the
table in one place is what makes the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# torch JIT type kind -> the base type name used in op schemas.
_BASE_OF_KIND = {
    "TensorType": "Tensor", "IntType": "int", "SymIntType": "SymInt", "FloatType": "float",
    "BoolType": "bool", "StringType": "str", "NumberType": "Scalar", "ScalarTypeType": "ScalarType",
    "LayoutType": "Layout", "MemoryFormatType": "MemoryFormat", "DeviceObjType": "Device",
    "NoneType": "NoneType",
}

# (base, is_list) -> Argument members accepted for a non-None value.
_MEMBERS: dict[tuple[str, bool], tuple[str, ...]] = {
    ("Tensor", False): ("as_tensor",),
    ("Tensor", True): ("as_tensors",),
    ("int", False): ("as_int",),
    ("int", True): ("as_ints",),
    ("SymInt", False): ("as_int", "as_sym_int"),
    ("SymInt", True): ("as_ints", "as_sym_ints"),
    ("float", False): ("as_float",),
    ("float", True): ("as_floats",),
    ("bool", False): ("as_bool",),
    ("bool", True): ("as_bools",),
    ("str", False): ("as_string",),
    ("str", True): ("as_strings",),
    ("Scalar", False): ("as_int", "as_sym_int", "as_float", "as_bool", "as_complex"),
    ("Scalar", True): ("as_ints", "as_sym_ints", "as_floats", "as_bools"),
    # torch 2.13 writes an enum *default* it filled in as `as_int` in c10's numbering (static, no
    # slot); readers accept it and convert through the c10 table (torch_types.*_from_c10).
    ("ScalarType", False): ("as_scalar_type", "as_int"),
    ("Layout", False): ("as_layout", "as_int"),
    ("MemoryFormat", False): ("as_memory_format", "as_int"),
    ("Device", False): ("as_device",),
}

ENUM_BASES = frozenset({"ScalarType", "Layout", "MemoryFormat"})

# Members whose values travel in the arrays (every other member is static, read from the JSON).
INT_MEMBERS = frozenset({"as_int", "as_sym_int"})
INT_LIST_MEMBERS = frozenset({"as_ints", "as_sym_ints"})
TENSOR_MEMBERS = frozenset({"as_tensor"})
TENSOR_LIST_MEMBERS = frozenset({"as_tensors", "as_optional_tensors"})

# Return type -> the output member it is written as.
_RETURN_MEMBERS = {
    ("Tensor", False, False): "as_tensor",
    ("Tensor", True, False): "as_tensors",
    ("Tensor", False, True): "as_optional_tensor",
    ("int", False, False): "as_int",
    ("SymInt", False, False): "as_int",
    ("NoneType", False, False): "as_none",
}


@dataclass(frozen=True)
class ArgType:
    """One op-schema type, decomposed: `Tensor?[]` is base Tensor, list, optional elements."""

    base: str
    is_list: bool = False
    optional: bool = False  # `T?` / `T[]?`: None is allowed
    elem_optional: bool = False  # `T?[]`

    def __str__(self) -> str:
        text = self.base + ("?" if self.elem_optional else "") + ("[]" if self.is_list else "")
        return text + ("?" if self.optional else "")

    @property
    def members(self) -> tuple[str, ...]:
        """Argument members a non-None value of this type may be written as ((): unsupported)."""
        if self.elem_optional:
            return ("as_optional_tensors", "as_tensors") if self.base == "Tensor" and self.is_list else ()
        return _MEMBERS.get((self.base, self.is_list), ())

    @property
    def supported(self) -> bool:
        return bool(self.members)

    @property
    def return_member(self) -> str | None:
        """The output member of this return type, None if the ABI cannot return it."""
        if self.elem_optional:
            return None
        return _RETURN_MEMBERS.get((self.base, self.is_list, self.optional))


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
    base = _BASE_OF_KIND.get(t.kind(), str(t))
    if base == "NoneType" and (optional or is_list):
        base = str(t)
    return ArgType(base, is_list, optional, elem_optional)


def accepts(at: ArgType, member: str) -> bool:
    """Whether an input of schema type `at` may be written as Argument member `member`."""
    return (member == "as_none" and at.optional) or member in at.members
