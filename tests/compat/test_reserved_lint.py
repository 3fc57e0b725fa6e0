"""Lint of the reserved_ids / reserved_names type annotations (one revision, no diff)."""

from __future__ import annotations

import pytest

from externspec.codegen import SchemaError, lint, parse_text
from externspec.codegen.reserved import parse_ids, parse_names


def _lint(text: str) -> None:
    lint(parse_text(text, "t.thrift"), text, require_version=False)


def test_reserved_ids_and_ranges() -> None:
    assert parse_ids("20, 40-42") == {20, 40, 41, 42}
    assert parse_ids("") == frozenset()
    assert parse_names("index, ordinal") == {"index", "ordinal"}
    for bad in ("x", "5-3", "1.5"):
        with pytest.raises(ValueError):
            parse_ids(bad)
    with pytest.raises(ValueError):
        parse_names("not a name")


def test_clean_reservations_pass() -> None:
    _lint('struct Device {\n  10: string type;\n} (reserved_ids = "20", reserved_names = "index")\n'
          'enum Color {\n  RED = 0,\n} (reserved_ids = "1", reserved_names = "GREEN")\n')


def test_fields_may_not_reuse_reserved_ids_or_names() -> None:
    text = ('struct Device {\n  10: string type;\n  20: optional i64 ordinal;\n  30: optional i64 index;\n}'
            ' (reserved_ids = "20", reserved_names = "index")\n'
            'enum Color {\n  RED = 0,\n  GREEN = 1,\n} (reserved_ids = "1")\n')
    with pytest.raises(SchemaError) as err:
        _lint(text)
    assert str(err.value).splitlines() == [
        't.thrift:3:3: field "Device.ordinal" uses 20, which "Device" reserves',
        't.thrift:4:3: field name "Device.index" is reserved by "Device"',
        't.thrift:8:3: enum value "Color.GREEN" uses 1, which "Color" reserves',
    ]


def test_malformed_reservation_is_reported() -> None:
    with pytest.raises(SchemaError, match=r't.thrift:1:8: bad reserved_ids/reserved_names annotation on "Device": '
                                          r"'twenty' is not an id or an id range"):
        _lint('struct Device {\n  10: string type;\n} (reserved_ids = "twenty")\n')
