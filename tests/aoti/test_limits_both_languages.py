"""One limits object per language (issue 45 item 4): `es.Limits` and C++ `externspec::Limits` have
the same names and defaults, and a limit lowered in Python (`externspec.wire.MAX_JSON_BYTES = n`)
binds the Python executor, the C++ executor and the runner alike (before, the last two kept their
compiled-in 256 MiB). Slow: builds es.cpp and compiles one small model (cached)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import externspec as es
import externspec.wire
from tests.support import cpp_models as cm
from tests.support.artifacts import read_member
from tests.support.executors import Executor

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("extraction_root")]


def test_both_languages_name_the_same_limits_with_the_same_defaults() -> None:
    cpp = es.cpp.extension().Limits()
    python = dataclasses.asdict(es.Limits())
    assert python == {name: getattr(cpp, name) for name in python}
    assert sorted(n for n in dir(cpp) if not n.startswith("_")) == sorted(python)
    assert python["max_json_bytes"] == externspec.wire.MAX_JSON_BYTES


def test_a_limit_out_of_range_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=r"Limits\.max_source_bytes must be an int from 0 to 2\*\*64 - 1, got -1"):
        es.Limits(max_source_bytes=-1)


@pytest.fixture
def lowered(monkeypatch: pytest.MonkeyPatch) -> int:
    """The process's JSON size limit lowered to 100 bytes, as a user lowers it."""
    monkeypatch.setattr(externspec.wire, "MAX_JSON_BYTES", 100)
    return 100


def _spec_text() -> bytes:
    return read_member(cm.package("extern_output"), ".wrapper.json")


def test_a_lowered_json_limit_binds_both_executors(executor: Executor, lowered: int) -> None:
    text = _spec_text()
    assert len(text) > lowered
    with pytest.raises(es.DecodeError) as refused:
        executor(text)
    (problem,) = refused.value.errors()
    assert problem["kind"] == "limit" and problem["path"] == "$"
    assert f"exceeds the size limit of {lowered} bytes" in problem["message"]
    assert len(executor('{"nodes": []}')) == 0  # a document within the limit loads


def test_a_lowered_json_limit_binds_the_runner(lowered: int) -> None:
    with pytest.raises(es.PackageError, match=r"\.wrapper\.json: \d+ bytes, over the limit of 100 bytes"):
        es.cpp.AOTIRunner(cm.package("extern_output"))


def test_the_runner_takes_each_limit_by_keyword(tmp_path: Path) -> None:
    package = cm.package("extern_output")
    with pytest.raises(es.PackageError, match=r"\.wrapper\.json: \d+ bytes, over the limit of 10 bytes"):
        es.cpp.AOTIRunner(package, limits=es.Limits.current(max_json_bytes=10))
    limits = es.Limits.current(max_json_bytes=1 << 20, max_custom_object_bytes=1)
    assert es.cpp.AOTIRunner(package, limits=limits).num_inputs == 1
