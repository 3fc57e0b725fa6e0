"""The contract on real torch 2.13 artifacts: externspec reads what torch writes and writes
what torch reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import externspec as es
from tests.support import artifacts

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", sorted(artifacts.EXPORT_MODELS))
def test_exported_program_round_trips_equal_to_torch(name: str) -> None:
    raw = artifacts.read_member(artifacts.exported_program(name), "models/model.json")
    program = es.loads(raw, es.ExportedProgram)
    assert json.loads(es.dumps(program)) == json.loads(raw)
    assert program.schema_version.major == es.TORCH_EXPORT_SCHEMA_MAJOR


def test_nested_graphs_of_higher_order_ops_decode() -> None:
    raw = artifacts.read_member(artifacts.exported_program("cond"), "models/model.json")
    program = es.loads(raw, es.ExportedProgram)
    graphs = [a.arg.as_graph for n in program.graph_module.graph.nodes for a in n.inputs
              if a.arg.type == "as_graph"]
    assert len(graphs) == 2
    assert all(g is not None and g.graph.nodes for g in graphs)


@pytest.mark.parametrize("name", sorted(artifacts.EXPORT_MODELS))
def test_torch_loads_an_externspec_written_program(name: str, tmp_path: Path) -> None:
    archive = artifacts.exported_program(name)
    ours = es.dumps(es.loads(artifacts.read_member(archive, "models/model.json"), es.ExportedProgram))
    patched = artifacts.replace_member(archive, "models/model.json", ours.encode(), tmp_path / "ours.pt2")
    module, inputs = artifacts.example(name)
    loaded = torch.export.load(patched).module()
    torch.testing.assert_close(loaded(*inputs), module(*inputs))


def test_aoti_extern_kernel_file_round_trips_equal_to_torch() -> None:
    raw = artifacts.read_member(artifacts.aoti_package(), ".wrapper.json")
    nodes = es.loads(raw, es.ExternKernelNodes)
    assert nodes.schema_version is None  # torch writes no version
    assert [n.node.target for n in nodes.nodes] == ["externspec_art::scale_add", "externspec_art::cast_sum"]
    assert json.loads(es.dumps(nodes)) == json.loads(raw)
    dtype = nodes.nodes[1].node.inputs[1].arg
    assert dtype.as_scalar_type == es.ScalarType.DOUBLE


def test_torch_runs_an_externspec_written_extern_kernel_file(tmp_path: Path) -> None:
    package = artifacts.aoti_package()
    nodes = es.loads(artifacts.read_member(package, ".wrapper.json"), es.ExternKernelNodes)
    nodes = nodes.model_copy(update={"schema_version": es.SCHEMA_VERSION})  # versioned: torch's reader ignores the key
    patched = artifacts.replace_member(package, ".wrapper.json", es.dumps(nodes).encode(), tmp_path / "ours.pt2")
    assert b"schema_version" in artifacts.read_member(patched, ".wrapper.json")
    runner = torch._inductor.aoti_load_package(str(patched))
    module, _ = artifacts.example("custom_ops")
    g = torch.Generator().manual_seed(7)
    inputs = tuple(torch.randn(6, 8, generator=g) for _ in range(3))  # another batch size
    torch.testing.assert_close(runner(*inputs), module(*inputs))
