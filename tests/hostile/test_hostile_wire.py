"""Hostile and broken documents through `es.loads`: only DecodeError / VersionError, never a crash.

Valid documents of every model round-trip (tests/support/strategies.py draws them from the
models); mutated ones (type swaps, missing/extra keys, multi-key unions, hostile ints, NaN, deep
nesting, long strings and lists, invalid UTF-8, truncation) are either accepted, and then
round-trip too, or rejected with a DecodeError that names a JSON path. The size and nesting limits
are enforced before any recursion.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import externspec as es
from externspec import wire
from tests.support.hostile_inputs import nesting_cases
from tests.support.strategies import MODELS, documents, mutated_bytes, mutated_trees

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _same(a: BaseModel, b: BaseModel) -> bool:
    """Equality that treats NaN as equal to itself (compare the encodings)."""
    return a == b or es.dumps(a) == es.dumps(b)


def _decode_or_reject(data: str | bytes, model: type[BaseModel], strict: bool = False) -> BaseModel | None:
    """The property every input must satisfy: a model, or an externspec error with a JSON path."""
    try:
        doc = es.loads(data, model, strict=strict)
    except es.DecodeError as exc:
        assert exc.errors() and all(e["path"].startswith("$") for e in exc.errors()), exc.errors()
        assert str(exc)
        return None
    except es.VersionError as exc:
        assert str(exc)
        return None
    again = es.loads(es.dumps(doc), model, strict=strict)
    assert _same(again, doc)
    return doc


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_model_round_trips(model: type[BaseModel], data: st.DataObject) -> None:
    doc = data.draw(documents(model, depth=2))
    text = es.dumps(doc)
    back = es.loads(text, model)
    assert _same(back, doc)
    assert es.dumps(back) == text
    assert _same(es.loads(text.encode(), model, strict=True), doc)


@SETTINGS
@given(data=st.data())
def test_structural_mutations_are_accepted_or_decode_errors(data: st.DataObject) -> None:
    model = data.draw(st.sampled_from(MODELS))
    tree = json.loads(es.dumps(data.draw(documents(model, depth=2))))
    mutated = data.draw(mutated_trees(tree))
    text = json.dumps(mutated)
    _decode_or_reject(text, model)
    _decode_or_reject(text.encode(), model, strict=True)


@SETTINGS
@given(data=st.data())
def test_byte_mutations_are_accepted_or_decode_errors(data: st.DataObject) -> None:
    model = data.draw(st.sampled_from(MODELS))
    raw = es.dumps(data.draw(documents(model, depth=2))).encode()
    _decode_or_reject(data.draw(mutated_bytes(raw)), model)


@pytest.mark.parametrize("junk", [b"", b"\xff\xfe", b"\x00", b"[", b"{" * 100_000, b"[" * 100_000 + b"]" * 100_000,
                                  b'{"nodes": ' + b"[" * 5000, b'"' + b"\\" * 1001, b"1" * 100_000, b"-0e-99999",
                                  b'{"a": "\xed\xa0\x80"}', b'{"nodes": [], "nodes": {}}', b"NaN", b"null"])
def test_junk_is_a_decode_error(junk: bytes) -> None:
    with pytest.raises(es.DecodeError) as info:
        es.loads(junk, es.ExternKernelNodes)
    assert info.value.path.startswith("$")


def _float_positions(value: Any) -> Any:
    """A copy of a model tree (as plain data) with every float replaced by NaN, and their count."""
    if isinstance(value, BaseModel):
        fields = {}
        count = 0
        for name in value.model_fields_set | {n for n, f in type(value).model_fields.items() if f.is_required()}:
            fields[name], n = _float_positions(getattr(value, name))
            count += n
        return type(value).model_construct(_fields_set=value.model_fields_set, **fields), count
    if isinstance(value, float):
        return math.nan, 1
    if isinstance(value, list):
        pairs = [_float_positions(v) for v in value]
        return [p[0] for p in pairs], sum(p[1] for p in pairs)
    if isinstance(value, dict):
        pairs2 = {k: _float_positions(v) for k, v in value.items()}
        return {k: p[0] for k, p in pairs2.items()}, sum(p[1] for p in pairs2.values())
    return value, 0


@pytest.mark.parametrize("model", [m for m in MODELS if "float" in repr(m.model_fields)], ids=lambda m: m.__name__)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_nan_in_every_float_position_round_trips(model: type[BaseModel], data: st.DataObject) -> None:
    doc, count = _float_positions(data.draw(documents(model, depth=2)))
    text = es.dumps(doc)
    assert len(re.findall(r'"NaN"', text)) >= count
    back = es.loads(text, model)
    assert es.dumps(back) == text
    bare = text.replace('"NaN"', "NaN")  # the JSON5-style token torch never writes: rejected or read as NaN
    _decode_or_reject(bare, model)


# ----------------------------------------------------------------------------------------------
# Limits


def _device_with_nesting(levels: int) -> str:
    return '{"type": "cpu", "index": 0, "x": ' + "[" * levels + "]" * levels + "}"


@pytest.mark.parametrize("levels", [wire.MAX_JSON_DEPTH + 1, 1000, 100_000])
def test_default_nesting_limit_is_a_decode_error_not_a_recursion_error(levels: int) -> None:
    with pytest.raises(es.DecodeError, match=f"nesting deeper than {wire.MAX_JSON_DEPTH} levels"):
        es.loads(_device_with_nesting(levels), es.Device)
    es.loads(_device_with_nesting(wire.MAX_JSON_DEPTH), es.Device)


@pytest.mark.parametrize("limit", [1, 2, 10, 64, 199])
def test_lower_nesting_limit(limit: int) -> None:
    assert es.loads(_device_with_nesting(limit), es.Device, max_depth=limit).type == "cpu"
    with pytest.raises(es.DecodeError, match=f"^\\$: nesting deeper than {limit} levels$"):
        es.loads(_device_with_nesting(limit + 1), es.Device, max_depth=limit)
    # Brackets inside strings (escaped quotes too) are not nesting.
    tricky = '{"type": "c\\"[[[[[[[[[[[[pu", "index": 0, "x": ' + "[" * limit + "]" * limit + "}"
    assert es.loads(tricky, es.Device, max_depth=limit).type == 'c"[[[[[[[[[[[[pu'


@pytest.mark.parametrize("limit", [1, 5, wire.MAX_JSON_DEPTH])
def test_one_nesting_rule_at_every_limit(limit: int) -> None:
    """Objects, arrays and both mixed, ending in a scalar, a string or an empty container, just inside
    and just outside the limit: the verdict of the rule (tests/support/hostile_inputs.py), at the
    parser's own limit and through the pre-scan of a lower one. tests/decoder_cpp/test_limits.py holds both
    C++ backends to the same table, and tests/hostile/test_hostile_limits.py both executors."""
    for name, value, accepted in nesting_cases(limit):
        text = '{"type": "cpu", "index": 0, "x": ' + value + "}"
        if accepted:
            assert es.loads(text, es.Device, max_depth=limit).type == "cpu", name
        else:
            with pytest.raises(es.DecodeError, match=f"^\\$: nesting deeper than {limit} levels"):
                es.loads(text, es.Device, max_depth=limit)
                pytest.fail(name)


def test_nesting_limit_above_the_parser_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="max_depth must be between 0 and 200"):
        es.loads(_device_with_nesting(1), es.Device, max_depth=wire.MAX_JSON_DEPTH + 1)


def test_size_limit_default_and_per_call() -> None:
    assert wire.MAX_JSON_BYTES == 256 * 1024 * 1024
    doc = es.dumps(es.Device(type="cpu", index=0))
    es.loads(doc, es.Device, max_bytes=len(doc))
    for data in (doc, doc.encode(), bytearray(doc.encode())):
        with pytest.raises(es.DecodeError, match=f"^\\$: document of {len(doc)} bytes exceeds the size limit "
                                                 f"of {len(doc) - 1} bytes$"):
            es.loads(data, es.Device, max_bytes=len(doc) - 1)


def test_size_limit_counts_utf8_bytes_of_text() -> None:
    doc = es.dumps(es.Device(type="\u00e9" * 10, index=0))  # 10 characters, 20 bytes
    size = len(doc.encode())
    es.loads(doc, es.Device, max_bytes=size)
    with pytest.raises(es.DecodeError, match=f"document of {size} bytes"):
        es.loads(doc, es.Device, max_bytes=size - 1)


def test_process_default_size_limit_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire, "MAX_JSON_BYTES", 10)
    with pytest.raises(es.DecodeError, match="exceeds the size limit of 10 bytes"):
        es.loads(es.dumps(es.Device(type="cpu", index=0)), es.Device)


def test_load_refuses_a_large_file_before_reading_it(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:
        f.truncate(wire.MAX_JSON_BYTES + 1)  # sparse: no disk, and it must not be read
    monkeypatch.setattr("builtins.open", _open_without_read(open))
    with pytest.raises(es.DecodeError, match=f"^{re.escape(str(path))}: \\$: document of {wire.MAX_JSON_BYTES + 1} "
                                             f"bytes exceeds the size limit"):
        es.load(path, es.ExternKernelNodes)


def _open_without_read(real_open: Any) -> Any:
    class NoRead:
        def __init__(self, f: Any):
            self.f = f

        def __enter__(self) -> NoRead:
            return self

        def __exit__(self, *exc: object) -> None:
            self.f.close()

        def fileno(self) -> int:
            return int(self.f.fileno())

        def read(self, *args: object) -> bytes:
            raise AssertionError("the oversized file was read")

    return lambda *a, **k: NoRead(real_open(*a, **k))


def test_long_strings_and_lists_within_the_limit_decode() -> None:
    def node(name: str) -> dict[str, Any]:
        return {"name": name, "node": {"target": "aten::add.Tensor", "inputs": [], "outputs": [], "metadata": {}}}

    doc = json.dumps({"nodes": [node("x" * 4_000_000)] + [node("y")] * 20_000})
    decoded = es.loads(doc, es.ExternKernelNodes, max_bytes=len(doc))
    assert len(decoded.nodes) == 20_001 and len(decoded.nodes[0].name) == 4_000_000
    with pytest.raises(es.DecodeError, match="exceeds the size limit"):
        es.loads(doc, es.ExternKernelNodes, max_bytes=len(doc) // 2)
