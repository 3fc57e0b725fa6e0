"""Conversions between torch's dtype/layout/memory-format/device objects and the schema enums.

Every conversion goes through a table keyed by *name*: `include/externspec/torch/torch_enums.def`,
which the C++ executor #includes too. Two numberings are in play and must never be mixed: the file
format's (`es.ScalarType.LONG == 5`) and c10's (`c10::ScalarType::Long == 4`). torch reports enum
defaults of op schemas in c10's numbering (`randint`'s `dtype=long` reads back as 4, which is `INT`
in the file format), so those go through `*_from_c10` first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from .._def_file import TORCH_DEF_DIR, entries
from .._generated.models import Device, Layout, MemoryFormat, ScalarType
from ..errors import UnsupportedError
from ..messages import message
from . import op_policy

if TYPE_CHECKING:
    from . import ArgType

TORCH_ENUMS_FILE = TORCH_DEF_DIR / "torch_enums.def"


def _torch_names() -> dict[str, dict[str, str]]:
    """Per macro of torch_enums.def (ES_SCALAR_TYPE, ES_LAYOUT, ES_MEMORY_FORMAT): schema member
    name -> torch attribute name. The c10 names are the C++ side's; torch's Python values are
    found by attribute."""
    tables: dict[str, dict[str, str]] = {"ES_SCALAR_TYPE": {}, "ES_LAYOUT": {}, "ES_MEMORY_FORMAT": {}}
    for where, kind, fields in entries(TORCH_ENUMS_FILE):
        if kind not in tables or len(fields) != 3:
            raise ValueError(f"{where}: malformed {kind} entry: {', '.join(fields)}")
        tables[kind][fields[0]] = fields[1]
    return tables


_NAMES = _torch_names()

# c10's own enum order (c10/core/ScalarType.h, Layout.h, MemoryFormat.h), by torch attribute name.
# Only used to read defaults that torch reports as c10 integers; tests check it against torch.
_C10_SCALAR_TYPES: tuple[str | None, ...] = (
    "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex32",
    "complex64", "complex128", "bool", "qint8", "quint8", "qint32", "bfloat16", "quint4x2",
    "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16", "float8_e5m2", "float8_e4m3fn",
    "float8_e5m2fnuz", "float8_e4m3fnuz", "uint16", "uint32", "uint64",
    "uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7",
    "int1", "int2", "int3", "int4", "int5", "int6", "int7", "float8_e8m0fnu", "float4_e2m1fn_x2",
)
_C10_LAYOUTS: tuple[str, ...] = ("strided", "sparse_coo", "sparse_csr", "_mkldnn", "sparse_csc",
                                 "sparse_bsr", "sparse_bsc", "jagged")
_C10_MEMORY_FORMATS: tuple[str, ...] = ("contiguous_format", "preserve_format", "channels_last",
                                        "channels_last_3d")


def _table(enum: Any, names: dict[str, str]) -> tuple[dict[Any, Any], dict[Any, Any]]:
    to_torch = {enum[member]: getattr(torch, attr) for member, attr in names.items() if hasattr(torch, attr)}
    return to_torch, {v: k for k, v in to_torch.items()}


_DTYPE_OF, _SCALAR_TYPE_OF = _table(ScalarType, _NAMES["ES_SCALAR_TYPE"])
_LAYOUT_OF, _SCHEMA_LAYOUT_OF = _table(Layout, _NAMES["ES_LAYOUT"])
_MEMORY_FORMAT_OF, _SCHEMA_MEMORY_FORMAT_OF = _table(MemoryFormat, _NAMES["ES_MEMORY_FORMAT"])


def _show(enum: Any, value: Any) -> str:
    """`ScalarType 0 (UNKNOWN)` / `ScalarType 17 (unassigned)` for error messages."""
    try:
        return f"{enum.__name__} {int(value)} ({enum(value).name})"
    except (ValueError, TypeError):
        return f"{enum.__name__} {value!r} (unassigned)"


def scalar_type_from_dtype(dtype: torch.dtype) -> ScalarType:
    """The file-format ScalarType of a torch dtype (UnsupportedError for qint*, bits*, ...)."""
    try:
        return _SCALAR_TYPE_OF[dtype]
    except KeyError:
        raise UnsupportedError(f"dtype {dtype} has no ScalarType in the file format") from None


def dtype_from_scalar_type(value: ScalarType | int) -> torch.dtype:
    """The torch dtype of a file-format ScalarType (UNKNOWN or an unassigned number is an error)."""
    try:
        return _DTYPE_OF[ScalarType(value)]
    except (KeyError, ValueError):
        raise UnsupportedError(f"{_show(ScalarType, value)} names no torch dtype") from None


def layout_from_torch(layout: torch.layout) -> Layout:
    try:
        return _SCHEMA_LAYOUT_OF[layout]
    except KeyError:
        raise UnsupportedError(f"layout {layout} has no Layout in the file format") from None


def torch_layout(value: Layout | int) -> torch.layout:
    try:
        return _LAYOUT_OF[Layout(value)]
    except (KeyError, ValueError):
        raise UnsupportedError(f"{_show(Layout, value)} names no torch layout") from None


def memory_format_from_torch(fmt: torch.memory_format) -> MemoryFormat:
    try:
        return _SCHEMA_MEMORY_FORMAT_OF[fmt]
    except KeyError:
        raise UnsupportedError(f"memory format {fmt} has no MemoryFormat in the file format") from None


def torch_memory_format(value: MemoryFormat | int) -> torch.memory_format:
    try:
        return _MEMORY_FORMAT_OF[MemoryFormat(value)]
    except (KeyError, ValueError):
        raise UnsupportedError(f"{_show(MemoryFormat, value)} names no torch memory format") from None


def device_from_torch(device: torch.device | str) -> Device:
    device = torch.device(device)
    return Device(type=device.type, index=device.index)


def torch_device(value: Device) -> torch.device:
    top = op_policy.policy().limits["device_index_max"]
    if value.index is not None and not 0 <= value.index <= top:
        # c10's DeviceIndex is int8: torch.device("cuda", 257) would silently be cuda:1.
        raise UnsupportedError(message("DEVICE_INDEX_RANGE", device=f"{value.type!r}:{value.index}", top=top))
    try:
        return torch.device(value.type) if value.index is None else torch.device(value.type, value.index)
    except (RuntimeError, ValueError) as exc:
        raise UnsupportedError(message("NOT_A_DEVICE", device=f"{value.type!r}:{value.index}", why=exc)) from None


def runtime_device(value: Device, runtime: torch.device | None) -> torch.device:
    """The device an `as_device` argument passes: `runtime` when given, in place of the serialized
    device (torch's proxy executor since pytorch#184741: a package compiled on cuda:0 and run on
    cuda:1 creates its tensors on cuda:1), else the serialized device, which is checked either way
    (the C++ executor's `runtime_device`, cpp/csrc/executor/torch_types.cpp)."""
    serialized = torch_device(value)
    return serialized if runtime is None else runtime


def parse_device(text: torch.device | str) -> torch.device:
    """A runtime device option (`"cpu"`, `"cuda:1"`, a torch.device) as a torch.device;
    UnsupportedError naming it when torch does not know it (the C++ `parse_device`)."""
    if isinstance(text, torch.device):
        device = text
    elif not isinstance(text, str):
        raise TypeError(f"device must be a str or torch.device, got {type(text).__name__}")
    else:
        # torch parses the index into c10's int8 DeviceIndex: "cuda:257" would silently be cuda:1.
        top = op_policy.policy().limits["device_index_max"]
        digits = text.rpartition(":")[2] if ":" in text else ""
        if digits.isdigit() and digits.isascii() and int(digits) > top:
            raise UnsupportedError(message("DEVICE_INDEX_RANGE", device=repr(text), top=top))
        try:
            device = torch.device(text)
        except (RuntimeError, ValueError) as exc:
            raise UnsupportedError(message("NOT_A_DEVICE", device=repr(text), why=exc)) from None
    # The CPU is one device: its tensors carry no index, so "cpu:0" is "cpu".
    if device.type == "cpu" and device.index is not None:
        if device.index != 0:
            raise UnsupportedError(message("CPU_DEVICE_INDEX", device=repr(str(text)), index=device.index))
        device = torch.device("cpu")
    return device


def _c10(table: tuple[str | None, ...], value: int, what: str) -> Any:
    name = table[value] if 0 <= value < len(table) else None
    if name is None or not hasattr(torch, name):
        raise UnsupportedError(message("C10_NUMBER_UNKNOWN", what=what, value=value))
    return getattr(torch, name)


def dtype_from_c10(value: int) -> torch.dtype:
    """A dtype from c10's numbering (how op-schema defaults report ScalarType)."""
    return _c10(_C10_SCALAR_TYPES, value, "ScalarType")


def layout_from_c10(value: int) -> torch.layout:
    return _c10(_C10_LAYOUTS, value, "Layout")


def memory_format_from_c10(value: int) -> torch.memory_format:
    return _c10(_C10_MEMORY_FORMATS, value, "MemoryFormat")


def enum_from_c10(base: str, value: int) -> Any:
    """The torch value of a c10-numbered enum of schema type `base` (ScalarType, Layout, MemoryFormat)."""
    convert = {"ScalarType": dtype_from_c10, "Layout": layout_from_c10, "MemoryFormat": memory_format_from_c10}
    return convert[base](value)


def schema_default(schema_arg: Any, at: ArgType) -> Any:
    """An argument's schema default as the Python value a caller would pass.

    torch reports enum defaults in c10's numbering (`dtype=long` reads as 4, INT in the file
    format), so they are converted through the c10 tables, never taken by value."""
    value = schema_arg.default_value
    if isinstance(value, int) and not isinstance(value, bool) and at.is_enum:
        return enum_from_c10(at.base, value)
    if at.base == "Device" and isinstance(value, str):
        return torch.device(value)
    return value
