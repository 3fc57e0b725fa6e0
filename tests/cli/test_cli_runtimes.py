"""`check-spec --runtimes` (issue 44, item 7): which torch releases and runners run a package, the cells
of `externspec.runtimes` (held to the matrix's measurements by tests/torch/test_runtimes.py), in text
and JSON; a spec alone cannot answer."""

from __future__ import annotations

import json
from pathlib import Path

from externspec import runtimes
from tests.support import matrix_ops  # noqa: F401  (registers es_matrix::scale for runtimes() here)
from tests.support.cli import externspec
from tests.support.paths import REPO

MATRIX = REPO / "tests" / "data" / "matrix"
OPS = str(REPO / "tests" / "support" / "matrix_ops.py")


def test_the_json_cells_are_the_functions() -> None:
    """torch 2.13's lite MLP passes addmm's omitted beta/alpha: torch's runner of no release runs it,
    both externspec executors of every release do; torch 2.15's grid_sample package calls a 2.13 C-shim
    function: no runtime of 2.11 or 2.12 runs it."""
    lite, shim = MATRIX / "2.13" / "lite.pt2", MATRIX / "2.15" / "shim.pt2"
    result = externspec("check-spec", "--runtimes", "--json", "--load", OPS, str(lite), str(shim))
    assert result.returncode == 0, result.stderr
    reports = json.loads(result.stdout)
    releases = runtimes.supported_releases()
    for report, path in zip(reports, (lite, shim), strict=True):
        assert report["runtimes"] == [{"torch": v.release, "runtime": v.runtime, "runs": v.runs, "kind": v.kind,
                                       "reason": v.reason} for v in runtimes.runtimes(str(path))]
        assert len(report["runtimes"]) == len(releases) * len(runtimes.RUNTIMES)
    lite_cells = {(c["torch"], c["runtime"]): c for c in reports[0]["runtimes"]}
    assert {c["kind"] for (_, rt), c in lite_cells.items() if rt == "torch"} == {"omitted_defaults"}
    assert all(c["runs"] for (_, rt), c in lite_cells.items() if rt != "torch")
    shim_cells = {(c["torch"], c["runtime"]): c for c in reports[1]["runtimes"]}
    assert {r for (r, _), c in shim_cells.items() if not c["runs"]} == {"2.11", "2.12"}
    assert {c["kind"] for c in shim_cells.values() if not c["runs"]} == {"c_shim"}


def test_the_text_is_a_table_with_each_reason_once() -> None:
    result = externspec("check-spec", "--runtimes", str(MATRIX / "2.15" / "shim.pt2"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    start = lines.index(f"{MATRIX / '2.15' / 'shim.pt2'}: runtimes, by torch release")
    assert lines[start + 1].split() == runtimes.supported_releases()
    assert lines[start + 2].split() == ["torch's", "runner", "no", "(1)", "no", "(1)", "yes", "yes", "yes"]
    assert lines[start + 5].startswith("  (1) its model library calls C-shim functions that torch 2.13 added "
                                       "(aoti_torch_cpu_grid_sampler_3d)")
    # then the CPU it was compiled for (issue 54 item 2), and nothing more
    assert lines[start + 6] == "  compiled for CPU ISA AVX2 (x86_64): this machine runs it"
    assert len(lines) == start + 7


def test_a_spec_alone_is_refused_naming_what_it_lacks(tmp_path: Path) -> None:
    spec = tmp_path / "model.wrapper.json"
    spec.write_text('{"nodes": []}')
    result = externspec("check-spec", "--runtimes", "--json", str(spec))
    assert result.returncode == 1
    (report,) = json.loads(result.stdout)
    assert [(e["kind"], e["message"].split(":")[0]) for e in report["errors"]] == [
        ("input", "--runtimes reads a package (.pt2)")]


def test_a_package_rewritten_with_named_defaults_runs_under_torchs_runner(tmp_path: Path) -> None:
    """`upgrade --name-defaults` states NODE_ARGUMENTS (tests/torch/test_name_defaults.py runs such a package
    through torch's runner): every runtime of every release then runs torch 2.13's lite MLP."""
    fixed = tmp_path / "lite.pt2"
    result = externspec("upgrade", "--name-defaults", "--load", OPS, str(MATRIX / "2.13" / "lite.pt2"), str(fixed))
    assert result.returncode == 0, result.stderr
    result = externspec("check-spec", "--runtimes", "--json", "--load", OPS, str(fixed))
    assert result.returncode == 0, result.stderr
    (report,) = json.loads(result.stdout)
    assert report["documents"][0]["call_layout"] == "NODE_ARGUMENTS"
    assert [c for c in report["runtimes"] if not c["runs"]] == []
