"""Enum conversions go through name tables; the c10 tables are checked against torch itself."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import externspec as es
from externspec.abi import torch_types as tt


@pytest.mark.parametrize("member", [m for m in es.ScalarType if m is not es.ScalarType.UNKNOWN])
def test_every_scalar_type_round_trips(member: es.ScalarType) -> None:
    assert tt.scalar_type_from_dtype(tt.dtype_from_scalar_type(member)) is member


def test_file_format_numbering_is_not_c10() -> None:
    # LONG is 5 in the file format and 4 in c10: the pitfall the name tables exist for.
    assert tt.scalar_type_from_dtype(torch.int64) == es.ScalarType.LONG == 5
    assert tt.dtype_from_c10(4) is torch.int64
    assert tt.dtype_from_scalar_type(4) is torch.int32


def test_c10_scalar_type_table_matches_torch() -> None:
    # torch accepts a c10 ScalarType number where a dtype is expected: use it as the oracle.
    checked = 0
    for number, name in enumerate(tt._C10_SCALAR_TYPES):
        if name is None or not hasattr(torch, name):
            continue
        try:
            made = torch.ops.aten.empty.memory_format([0], dtype=number)
        except RuntimeError:
            continue  # quantized/bit types cannot be allocated this way
        assert made.dtype is getattr(torch, name), (number, name)
        checked += 1
    assert checked >= 20


def test_c10_defaults_from_op_schemas() -> None:
    # The schema parser knows these default spellings; it reports them as c10 numbers.
    schema = torch._C.parse_schema(
        "f(ScalarType a=long, ScalarType b=float, ScalarType c=bool, ScalarType d=int, Layout e=strided, "
        "MemoryFormat g=contiguous_format) -> ()")
    a, b, c, d, e, g = (arg.default_value for arg in schema.arguments)
    assert [tt.dtype_from_c10(v) for v in (a, b, c, d)] == [torch.int64, torch.float32, torch.bool, torch.int32]
    assert tt.layout_from_c10(e) is torch.strided
    assert tt.memory_format_from_c10(g) is torch.contiguous_format
    # aten's own memory_format arguments accept c10 numbers: channels_last is 2, preserve 1.
    x = torch.ones(1, 2, 3, 3)
    assert torch.ops.aten.clone.default(x, memory_format=2).is_contiguous(memory_format=torch.channels_last)
    assert tt.memory_format_from_c10(2) is torch.channels_last


@pytest.mark.parametrize("layout", [torch.strided, torch.sparse_coo, torch.sparse_csr, torch.sparse_csc,
                                    torch.sparse_bsr, torch.sparse_bsc, torch._mkldnn])
def test_layouts_round_trip(layout: torch.layout) -> None:
    assert tt.torch_layout(tt.layout_from_torch(layout)) is layout


@pytest.mark.parametrize("fmt", [torch.contiguous_format, torch.channels_last, torch.channels_last_3d,
                                 torch.preserve_format])
def test_memory_formats_round_trip(fmt: torch.memory_format) -> None:
    assert tt.torch_memory_format(tt.memory_format_from_torch(fmt)) is fmt


def test_devices() -> None:
    assert tt.device_from_torch("cpu") == es.Device(type="cpu", index=None)
    assert tt.torch_device(es.Device(type="cuda", index=1)) == torch.device("cuda", 1)
    with pytest.raises(es.UnsupportedError, match="not a torch device"):
        tt.torch_device(es.Device(type="nonsense", index=None))


def test_unmapped_values_are_errors() -> None:
    with pytest.raises(es.UnsupportedError, match="qint8"):
        tt.scalar_type_from_dtype(torch.qint8)
    with pytest.raises(es.UnsupportedError, match=r"ScalarType 0 \(UNKNOWN\)"):
        tt.dtype_from_scalar_type(es.ScalarType.UNKNOWN)
    with pytest.raises(es.UnsupportedError, match=r"ScalarType 17 \(unassigned\)"):
        tt.dtype_from_scalar_type(17)
    with pytest.raises(es.UnsupportedError, match="c10 Layout number 99"):
        tt.layout_from_c10(99)


def test_enum_table_file_is_read_strictly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """torch_enums.def (shared with the C++ executor) is data: an entry of the wrong shape is an
    error naming its line, not a table with a hole."""
    bad = tmp_path / "torch_enums.def"
    bad.write_text("#define ES_LAYOUT(member, attribute, c10_name)\n"
                   "ES_SCALAR_TYPE(BYTE, uint8, Byte)\n"
                   "ES_LAYOUT(Strided)\n")
    monkeypatch.setattr(tt, "TORCH_ENUMS_FILE", bad)
    with pytest.raises(ValueError, match=r"torch_enums.def:3: malformed ES_LAYOUT entry: Strided"):
        tt._torch_names()
