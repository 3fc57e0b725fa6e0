"""inspect shows the run (issue 44, item 2): each node's slots under the call layout the package
decides, and how it was decided, the numbers `check-spec`, the executors and the wrapper's own calls
use. The packages are torch's (tests/data/matrix): the lite-mode MLP whose `addmm` nodes omit the
kwarg-only beta/alpha, which torch 2.13's wrapper passes in the int array and 2.15's does not."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

import externspec as es
from externspec import aoti
from tests.support import matrix_ops  # noqa: F401  (registers es_matrix::scale for the executor here)
from tests.support.cli import externspec
from tests.support.paths import REPO

MATRIX = REPO / "tests" / "data" / "matrix"
OPS = str(REPO / "tests" / "support" / "matrix_ops.py")
LAYOUTS = {"2.13": "OMITTED_DEFAULTS_PASSED", "2.15": "NODE_ARGUMENTS"}
ADDMM_INTS = {"2.13": 2, "2.15": 0}


def _members(package: Path) -> tuple[str, bytes, str]:
    with zipfile.ZipFile(package) as z:
        spec = next(n for n in z.namelist() if n.endswith(".wrapper.json"))
        return spec, z.read(spec), z.read(aoti.wrapper_source(spec)).decode()


def _report(*args: str) -> list[dict[str, Any]]:
    result = externspec(*args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("release", list(LAYOUTS))
def test_inspect_counts_are_the_runs(release: str) -> None:
    package = MATRIX / release / "lite.pt2"
    _, spec_bytes, cpp = _members(package)
    (inspected,) = _report("inspect", "--json", "--load", OPS, str(package))[0]["documents"]
    (checked,) = _report("check-spec", "--json", "--load", OPS, str(package))[0]["documents"]
    assert inspected["call_layout"] == checked["call_layout"] == LAYOUTS[release]
    assert inspected["ops"] == ["aten::_softmax", "aten::addmm", "aten::relu", "aten::sub.Tensor", "aten::t",
                                "es_matrix::scale"]
    assert inspected["call_layout_decided_by"] == checked["call_layout_decided_by"] == \
        "decided by the wrapper's call of node 1"
    addmm = inspected["nodes"][1]
    assert addmm["target"] == "aten::addmm"
    assert addmm["slots"]["int_inputs"] == ADDMM_INTS[release]
    assert [a["name"] for a in addmm["passed_defaults"]] == (["beta", "alpha"] if release == "2.13" else [])
    assert set(addmm["layouts"]) == {"NODE_ARGUMENTS", "OMITTED_DEFAULTS_PASSED"}
    # The same numbers as check-spec, the wrapper's calls and the Python executor planning with them.
    calls = aoti.wrapper_call_lengths(cpp)
    executor = es.ProxyExecutor(es.loads(spec_bytes, es.ExternKernelNodes), call_lengths=calls)
    assert executor.call_layout is not None and executor.call_layout.name == LAYOUTS[release]
    for index, num_ints, num_tensors in calls:
        slots = inspected["nodes"][index]["slots"]
        node = checked["nodes"][index]
        assert slots["int_inputs"] + slots["int_outputs"] == num_ints == executor.plans[index].num_ints
        assert slots["tensor_inputs"] + slots["tensor_outputs"] == num_tensors
        assert (node["int_inputs"], node["tensor_inputs"]) == (slots["int_inputs"], slots["tensor_inputs"])


@pytest.mark.parametrize("release", list(LAYOUTS))
def test_inspect_text_states_the_layout(release: str) -> None:
    result = externspec("inspect", "--load", OPS, str(MATRIX / release / "lite.pt2"))
    assert result.returncode == 0, result.stderr
    assert f"call layout {LAYOUTS[release]}: decided by the wrapper's call of node 1\n" in result.stdout
    assert ("as_int (default)" in result.stdout) == (release == "2.13")
    assert f"static {2 - ADDMM_INTS[release]} · ints {ADDMM_INTS[release]}+0 · tensors 3+1" in result.stdout


def test_bare_torch_written_file_is_undecided(tmp_path: Path) -> None:
    """Without its wrapper source nothing decides: a node with two layouts shows both, no count."""
    _, spec_bytes, _ = _members(MATRIX / "2.13" / "lite.pt2")
    spec = tmp_path / "lite.wrapper.json"
    spec.write_bytes(spec_bytes)
    (doc,) = _report("inspect", "--json", "--load", OPS, str(spec))[0]["documents"]
    assert doc["call_layout"] is None
    assert doc["call_layout_decided_by"].startswith("a torch-written file without its wrapper source")
    addmm = doc["nodes"][1]
    assert addmm["slots"] is None
    assert {k: v["int_inputs"] for k, v in addmm["layouts"].items()} == {"NODE_ARGUMENTS": 0,
                                                                         "OMITTED_DEFAULTS_PASSED": 2}
    text = externspec("inspect", "--load", OPS, str(spec)).stdout
    assert "ints 0+0 or 2+0 (undecided)" in text
    assert "as_int (default, if passed)" in text
    (checked,) = _report("check-spec", "--json", "--load", OPS, str(spec))[0]["documents"]
    assert checked["call_layout"] is None and checked["nodes"][1] == {"label": "node 1 `buf2` (aten::addmm)",
                                                                     "undecided": True}


def test_stated_layout(tmp_path: Path) -> None:
    """A file stating its layout (schema 1.2, as `upgrade --name-defaults` writes) is laid out by it."""
    fixed = tmp_path / "fixed.pt2"
    named = externspec("upgrade", "--name-defaults", "--load", OPS, str(MATRIX / "2.13" / "lite.pt2"), str(fixed))
    assert named.returncode == 0, named.stderr
    (doc,) = _report("inspect", "--json", "--load", OPS, str(fixed))[0]["documents"]
    assert (doc["call_layout"], doc["call_layout_decided_by"]) == ("NODE_ARGUMENTS", "stated by the file (call_layout)")
    assert doc["nodes"][1]["slots"]["int_inputs"] == 2 and "layouts" not in doc["nodes"][1]
