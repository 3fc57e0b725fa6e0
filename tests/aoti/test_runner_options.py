"""The runner's options are one class (issue 46, item 5): C++ `externspec::AOTIRunnerOptions`,
bound as `es.cpp.AOTIRunnerOptions`, its defaults written once (in the C++ struct), every field
set by keyword from Python (`es.cpp.AOTIRunner(path, **options)` passes them to it), `num_models`
checked once (in C++) for both languages.

Slow: builds es.cpp (cached)."""

from __future__ import annotations

from typing import Any

import pytest

import externspec as es
from externspec._generated.models import CallLayout

pytestmark = pytest.mark.slow

OPTIONS = ["model_name", "device", "custom_objects", "num_models", "op_libraries", "load_custom_objects", "limits",
           "require_input_records", "call_layout"]


def test_the_defaults_are_the_cpp_structs() -> None:
    options = es.cpp.extension().AOTIRunnerOptions()
    assert {name: getattr(options, name) for name in OPTIONS if name != "limits"} == {
        "model_name": "model", "device": "cpu", "custom_objects": {}, "num_models": 1, "op_libraries": [],
        "load_custom_objects": False, "require_input_records": False, "call_layout": "auto"}
    cpp_limits = es.cpp.extension().Limits()
    assert {n: getattr(options.limits, n) for n in vars(es.Limits())} == {n: getattr(cpp_limits, n)
                                                                          for n in vars(es.Limits())}


@pytest.mark.parametrize(("name", "value", "read_back"), [
    ("model_name", "other", "other"),
    ("device", "cpu:0", "cpu:0"),
    ("num_models", 4, 4),
    ("op_libraries", ["a.so", es.cpp.cache_dir() / "b.so"], ["a.so", str(es.cpp.cache_dir() / "b.so")]),
    ("load_custom_objects", True, True),
    ("require_input_records", True, True),
    ("call_layout", CallLayout.NODE_ARGUMENTS, "NODE_ARGUMENTS"),
    ("call_layout", "OMITTED_DEFAULTS_PASSED", "OMITTED_DEFAULTS_PASSED"),
])
def test_every_option_is_set_by_keyword(name: str, value: Any, read_back: Any) -> None:
    assert getattr(es.cpp.AOTIRunnerOptions(**{name: value}), name) == read_back


def test_limits_are_an_es_limits_and_unset_the_process_defaults_at_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    given = es.cpp.AOTIRunnerOptions(limits=es.Limits(max_source_bytes=5, max_extracted_bytes=6)).limits
    assert (given.max_source_bytes, given.max_extracted_bytes) == (5, 6)
    monkeypatch.setattr(es.wire, "MAX_JSON_BYTES", 1234)
    assert es.cpp.AOTIRunnerOptions().limits.max_json_bytes == 1234


def test_an_unknown_option_is_refused_naming_the_options() -> None:
    with pytest.raises(TypeError, match=r"AOTIRunner has no option `max_json_bytes` \(its options: model_name, "):
        es.cpp.AOTIRunnerOptions(max_json_bytes=10)


@pytest.mark.parametrize(("name", "value", "error", "match"), [
    ("num_models", 0, ValueError, r"num_models is 0: a runner takes 1 to 1024 model instances"),
    ("num_models", 2**70, ValueError, r"num_models is 9223372036854775807: a runner takes 1 to 1024"),
    ("num_models", True, TypeError, r"num_models must be an int, got bool"),
    ("op_libraries", "libx.so", TypeError, r"op_libraries takes a list of library paths, got one path"),
    ("call_layout", "sideways", ValueError, r'call_layout must be "auto", "NODE_ARGUMENTS" or '),
])
def test_a_bad_value_is_refused_naming_the_option(name: str, value: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        es.cpp.AOTIRunnerOptions(**{name: value})
