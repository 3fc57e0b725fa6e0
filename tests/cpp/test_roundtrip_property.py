"""Property: any valid document survives Python dumps -> C++ decode -> C++ encode -> Python loads.

Documents are drawn from the generated models themselves (every field, union member and enum), so
the property follows the IDL as it changes. Both backends; one harness process per example.
"""

from __future__ import annotations

import enum
import tempfile
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import externspec as es
from externspec._modelbase import I64_MAX, I64_MIN
from externspec._modelbase import Union as UnionModel

pytestmark = pytest.mark.slow

_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
_floats = st.floats(allow_nan=False) | st.sampled_from([0.1, 1e-05, 1e20, 1e16, 1e15, -0.0, 1.5e-7, 5e-324])


def _bounds(field: Any) -> tuple[int, int]:
    lo, hi = I64_MIN, I64_MAX
    for m in getattr(field, "metadata", ()):
        lo = getattr(m, "ge", lo)
        hi = getattr(m, "le", hi)
    return lo, hi


def _value(tp: Any, depth: int, field: Any = None) -> st.SearchStrategy[Any]:
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        base, *meta = typing.get_args(tp)
        info = next((m for m in meta if hasattr(m, "metadata")), field)
        return _value(base, depth, info)
    if origin in (typing.Union, types.UnionType):
        (inner,) = [a for a in typing.get_args(tp) if a is not type(None)]
        return st.none() | _value(inner, depth, field)
    if origin is list:
        (elem,) = typing.get_args(tp)
        return st.lists(_value(elem, depth - 1), max_size=3 if depth > 0 else 0)
    if origin is dict:
        _, elem = typing.get_args(tp)
        return st.dictionaries(_text, _value(elem, depth - 1), max_size=3 if depth > 0 else 0)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return st.sampled_from(list(tp))
    if tp is bool:
        return st.booleans()
    if tp is int:
        lo, hi = _bounds(field)
        return st.integers(lo, hi) | st.sampled_from([lo, hi, 0])
    if tp is float:
        return _floats
    if tp is str:
        return _text
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return st.deferred(lambda: _model(tp, depth - 1))
    raise TypeError(f"no strategy for {tp!r}")


def _is_recursive(tp: Any) -> bool:
    return "Graph" in repr(tp) or "Argument]" in repr(tp)


def _model(model: type[BaseModel], depth: int) -> st.SearchStrategy[Any]:
    fields = model.model_fields
    if issubclass(model, UnionModel):
        members = [n for n, f in fields.items() if depth > 0 or not _is_recursive(f.annotation)]
        inner = {n: typing.get_args(fields[n].annotation)[0] for n in members}  # strip Optional
        return st.one_of([_value(inner[n], depth, fields[n]).map(lambda v, n=n: model.model_validate({n: v}))
                          for n in members])
    required = {n: _value(f.annotation, depth, f) for n, f in fields.items() if f.is_required()}
    optional = {n: _value(f.annotation, depth, f) for n, f in fields.items() if not f.is_required()}
    return st.fixed_dictionaries(required, optional=optional).map(model.model_validate)


TYPES = [es.ExternKernelNodes, es.Node, es.Argument, es.TensorMeta, es.ExportedProgram]


@pytest.fixture(scope="module")
def workdir() -> typing.Iterator[Path]:
    with tempfile.TemporaryDirectory() as d:
        yield Path(d)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_python_to_cpp_to_python_is_identity(harness, workdir: Path, data: st.DataObject) -> None:
    model_type = data.draw(st.sampled_from(TYPES))
    original = data.draw(_model(model_type, 3))
    original = _readable_version(original, data.draw(st.integers(0, 2**31)))
    text = es.dumps(original)
    path = workdir / f"doc-{harness.backend}.json"
    path.write_text(text, encoding="utf-8")
    got = harness.one(model_type.__name__, path)
    assert got.kind == "OK", got.message
    assert got.encoded == text
    again = es.loads(got.encoded, model_type)
    assert again == original or _has_nan(text)


def _readable_version(doc: BaseModel, minor: int) -> BaseModel:
    """Versioned documents must carry a version the reader accepts (the version policy is tested
    in the conformance corpus); other types are returned as they are."""
    if isinstance(doc, es.ExternKernelNodes) and doc.schema_version is not None:
        return doc.model_copy(update={"schema_version": es.SchemaVersion(major=es.SCHEMA_VERSION.major, minor=minor)})
    if isinstance(doc, es.ExportedProgram):
        version = es.SchemaVersion(major=es.TORCH_EXPORT_SCHEMA_MAJOR, minor=minor)
        return doc.model_copy(update={"schema_version": version})
    return doc


def _has_nan(text: str) -> bool:
    return "NaN" in text
