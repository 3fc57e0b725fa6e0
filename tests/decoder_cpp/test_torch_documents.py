"""Documents torch itself wrote decode in C++ and re-encode to the bytes of Python's es.dumps."""

from __future__ import annotations

import json

import pytest

import externspec as es
from tests.decoder_cpp import torch_documents

pytestmark = pytest.mark.slow  # AOTInductor compile (cached in .cache/torch_docs) + harness build



@pytest.fixture(scope="session")
def wrapper_json():
    return torch_documents.wrapper_json()


@pytest.fixture(scope="session", params=["custom_ops", "cond"])
def model_json(request):
    return torch_documents.model_json(request.param)


def test_aoti_wrapper_json_round_trips(harness, wrapper_json) -> None:
    raw = json.loads(wrapper_json.read_text())
    assert "schema_version" not in raw  # torch writes no version: read under the 1.0 baseline
    (node,) = [n for n in raw["nodes"] if n["node"]["target"] == "externspec_art::scale_add"]
    assert node["node"]["metadata"] == {"torch_library_custom_op": "1"}
    model = es.load(wrapper_json, es.ExternKernelNodes)
    got = harness.one("ExternKernelNodes", wrapper_json)
    assert got.kind == "OK", got.message
    assert got.encoded == es.dumps(model)
    assert es.loads(got.encoded, es.ExternKernelNodes) == model


def test_torch_export_model_json_round_trips(harness, model_json) -> None:
    raw = json.loads(model_json.read_text())
    assert raw["schema_version"]["major"] == es.TORCH_EXPORT_SCHEMA_MAJOR
    text = model_json.read_text()
    assert '"as_expr"' in text or '"as_graph"' in text  # symbolic sizes (custom_ops) or subgraphs (cond)
    model = es.load(model_json, es.ExportedProgram)
    got = harness.one("ExportedProgram", model_json)
    assert got.kind == "OK", got.message
    assert got.encoded == es.dumps(model)
    assert es.loads(got.encoded, es.ExportedProgram) == model


def test_benchmark_program_is_valid_for_torch_and_both_decoders(harness, tmp_path) -> None:
    """benchmarks/gen_program's documents are real programs: torch's own deserializer rebuilds them."""
    import torch
    from torch._export.serde import schema, serialize

    from benchmarks.gen_program import make_exported_program, parameter_shapes

    program = make_exported_program(300, seed=3)
    state = {k: torch.nn.Parameter(torch.zeros(v)) for k, v in parameter_shapes(program).items()}
    ep = serialize.ExportedProgramDeserializer().deserialize(
        serialize._dict_to_dataclass(schema.ExportedProgram, program), state, {}, {})
    assert sum(n.op == "call_function" for n in ep.graph.nodes) >= 300
    path = tmp_path / "program.json"
    path.write_text(json.dumps(program))
    model = es.load(path, es.ExportedProgram)
    got = harness.one("ExportedProgram", path)
    assert got.kind == "OK", got.message
    assert got.encoded == es.dumps(model)
