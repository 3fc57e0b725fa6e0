"""The Python emitter's output behaves: golden-case modules imported and exercised."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

import externspec as es

CASES = Path(__file__).parent / "cases"


def load_case(case: str) -> ModuleType:
    path = CASES / case / "expected" / "python" / "models.py"
    name = f"golden_{case}_models"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_union_is_a_single_key_object_with_exactly_one_member() -> None:
    m = load_case("union")
    v = m.Value.model_validate_json('{"as_point": {"x": 1, "y": 2}}')
    assert v.type == "as_point" and v.value == m.Point(x=1, y=2)
    assert v.model_dump_json() == '{"as_point":{"x":1,"y":2}}'
    for bad in ("{}", '{"as_int": 1, "as_float": 2.0}', '{"as_nope": 1}'):
        with pytest.raises(es.DecodeError):  # model_validate_json is es.loads
            m.Value.model_validate_json(bad)
    assert m.Value.MEMBERS == ("as_int", "as_float", "as_strings", "as_point")


def test_recursive_types_validate() -> None:
    m = load_case("recursion")
    tree = m.Tree.model_validate_json('{"label": "a", "children": [{"label": "b", "children": []}]}')
    assert tree.children[0].label == "b"
    expr = m.Expr.model_validate_json(
        '{"as_call": {"fn": "f", "arguments": [{"as_record": {"k": {"as_int": 3}}}]}}')
    assert expr.as_call.arguments[0].as_record["k"].as_int == 3


def test_optional_fields_and_omit_if_null() -> None:
    m = load_case("optional")
    d = m.Device.model_validate_json('{"type": "cpu"}')
    assert d.index is None and d.fallback is None
    assert d.model_dump_json() == '{"type":"cpu","index":null,"fallback":null}'
    assert m.Device(type="cpu", label="x").model_dump_json().endswith('"label":"x"}')


def test_defaults_and_consts() -> None:
    m = load_case("defaults")
    o = m.Options.model_validate_json('{"required_count": 2}')
    assert (o.verbose, o.retries, o.scale, o.name, o.tags, o.limits, o.mode) == (
        False, 3, 1.5, "<=2.4", [], {"a": 1}, m.Mode.SAFE)
    assert m.Options(required_count=1).tags is not m.Options(required_count=1).tags
    with pytest.raises(es.DecodeError):  # model_validate_json is es.loads
        m.Options.model_validate_json("{}")  # a field without a default is required
    assert m.DEFAULT_OPTIONS.mode == m.Mode.FAST and m.LIMIT == 7


def test_enum_values_keep_gaps() -> None:
    m = load_case("enum")
    assert [(k.name, k.value) for k in m.Kind] == [("NONE", 0), ("SMALL", 1), ("LARGE", 10)]
    with pytest.raises(es.DecodeError):  # model_validate_json is es.loads
        m.Tagged.model_validate_json('{"kind": 3, "history": []}')
    assert math.isfinite(m.Kind.LARGE)
