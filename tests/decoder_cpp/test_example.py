"""examples/print_nodes.cpp builds with the documented one-line flags and reads a real wrapper.json."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import externspec as es
from tests.decoder_cpp import torch_documents
from tests.decoder_cpp.harness import CACHE
from tests.support.cppbuild import build
from tests.support.paths import CONFORMANCE, REPO

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def print_nodes() -> Path:
    flags = ["-std=c++17", f"-I{es.get_include()}"]  # the documented command line, nothing more
    return build(REPO / "examples" / "print_nodes.cpp", CACHE, "print_nodes", flags)


def test_prints_the_nodes_of_an_aoti_wrapper_json(print_nodes: Path) -> None:
    wrapper = torch_documents.wrapper_json()
    out = subprocess.run([str(print_nodes), str(wrapper)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    nodes = es.load(wrapper, es.ExternKernelNodes).nodes
    expected = [
        f"{i} {n.name} = {n.node.target}("
        + ", ".join(f"{a.name}: {a.arg.type}" for a in n.node.inputs)
        + f") -> {len(n.node.outputs)} output(s)"
        for i, n in enumerate(nodes)
    ]
    assert out.stdout.splitlines() == expected
    assert expected[0].startswith("0 buf0 = externspec_art::scale_add(x: as_tensor, y: as_tensor, alpha: as_float")


def test_reports_bad_input_with_its_json_path(print_nodes: Path) -> None:
    bad = CONFORMANCE / "invalid" / "int_as_string.json"
    out = subprocess.run([str(print_nodes), str(bad)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert out.stderr == f"{bad}: $.nodes[0].node.inputs[1].arg.as_int: expected `int`, got `str`\n"
