"""Documents torch itself wrote decode in C++ and re-encode to the bytes of Python's es.dumps."""

from __future__ import annotations

import json

import externspec as es
import pytest

pytestmark = pytest.mark.slow  # AOTInductor compile (cached in .cache/torch_docs) + harness build

import torch_documents  # noqa: E402  (tests/cpp is on sys.path: rootdir-relative conftest)


@pytest.fixture(scope="session")
def wrapper_json():
    return torch_documents.wrapper_json()


@pytest.fixture(scope="session")
def model_json():
    return torch_documents.model_json()


def test_aoti_wrapper_json_round_trips(harness, wrapper_json) -> None:
    raw = json.loads(wrapper_json.read_text())
    assert "schema_version" not in raw  # torch writes no version: read under the 1.0 baseline
    (node,) = [n for n in raw["nodes"] if n["node"]["target"] == "externspec_conformance::scale_add"]
    assert node["node"]["metadata"] == {"torch_library_custom_op": "1"}
    model = es.load(wrapper_json, es.ExternKernelNodes)
    got = harness.one("ExternKernelNodes", wrapper_json)
    assert got.kind == "OK", got.message
    assert got.encoded == es.dumps(model)
    assert es.loads(got.encoded, es.ExternKernelNodes) == model


def test_torch_export_model_json_round_trips(harness, model_json) -> None:
    raw = json.loads(model_json.read_text())
    assert raw["schema_version"]["major"] == es.TORCH_EXPORT_SCHEMA_MAJOR
    assert any("as_expr" in s for tv in raw["graph_module"]["graph"]["tensor_values"].values() for s in tv["sizes"])
    model = es.load(model_json, es.ExportedProgram)
    got = harness.one("ExportedProgram", model_json)
    assert got.kind == "OK", got.message
    assert got.encoded == es.dumps(model)
    assert es.loads(got.encoded, es.ExportedProgram) == model
