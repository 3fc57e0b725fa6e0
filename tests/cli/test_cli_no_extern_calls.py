"""Valid is valid (issue 44, item 1): a package or spec with no extern calls is what torch writes for
a model whose every op Inductor compiled or calls through a C shim (torch 2.15's default mode writes
no `*.wrapper.json` for most models). `validate`, `inspect` and `check-spec` accept it and say "no
extern calls"; `upgrade` copies it byte for byte (docs/cli.md).

The packages are torch's own, from tests/data/matrix: `shim` (default mode, grid_sampler_3d through
its C shim) written by torch 2.13 and 2.15, and `int_add_lite` (lite mode) written by torch 2.13.
torch 2.15 compiles `int_add_lite` with two extern calls, so the 2.15 lite case is its
`*.wrapper.json` with its nodes removed, as a lite-mode spec of no calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import externspec
from tests.support.paths import REPO

MATRIX = REPO / "tests" / "data" / "matrix"
PACKAGES = {  # (torch, mode) -> a package torch wrote without extern calls
    ("2.13", "default"): MATRIX / "2.13" / "shim.pt2",
    ("2.13", "lite"): MATRIX / "2.13" / "int_add_lite.pt2",
    ("2.15", "default"): MATRIX / "2.15" / "shim.pt2",
}
FOLDER = "data/aotinductor/model/"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Every package above, and the empty spec of each kind (torch-written, externspec-written)."""
    out = tmp_path_factory.mktemp("empty")
    (out / "torch.wrapper.json").write_text('{"nodes": []}')
    (out / "externspec.json").write_text(json.dumps({"nodes": [], "schema_version": {"major": 1, "minor": 2},
                                                     "call_layout": 1, "producer": "a test"}))
    return [str(p) for p in PACKAGES.values()] + [str(out / "torch.wrapper.json"), str(out / "externspec.json")]


def _sources(path: str) -> str:
    """The document a file's result names: a package's model folder, or the spec itself."""
    return f"{path}:{Path(path).stem}/{FOLDER}" if path.endswith(".pt2") else path


@pytest.mark.parametrize("command", ["validate", "inspect", "check-spec"])
def test_no_extern_calls_is_valid(command: str, files: list[str]) -> None:
    text = externspec(command, *files)
    assert (text.returncode, text.stderr) == (0, "")
    for path in files:
        assert any(_sources(path) in line for line in text.stdout.splitlines()), path
    assert text.stdout.count("no extern calls") == len(files)
    assert text.stdout.count("the model folder has no *.wrapper.json") == len(PACKAGES)
    report = externspec(command, "--format", "json", *files)
    assert report.returncode == 0, report.stderr
    results = json.loads(report.stdout)
    assert [(r["file"], r["ok"], r["errors"]) for r in results] == [(f, True, []) for f in files]
    for result in results:
        (document,) = result["documents"]
        assert document["source"] == _sources(result["file"])
        assert "no extern calls" in document["summary"]
        assert document["nodes"] in (0, [])


@pytest.mark.parametrize("key", list(PACKAGES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_upgrade_copies_byte_for_byte(key: tuple[str, str], tmp_path: Path) -> None:
    package = PACKAGES[key]
    out = tmp_path / "copy.pt2"
    result = externspec("upgrade", str(package), str(out))
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == f"wrote {out}: no member needed an upgrade (copied)\n"
    assert out.read_bytes() == package.read_bytes()


def test_lite_215_spec_of_no_calls(tmp_path: Path) -> None:
    """torch 2.15's lite-mode extern-kernel file with its nodes removed: a spec of no calls, valid to
    every command, and `upgrade --name-defaults` stamps it without nodes to name."""
    import zipfile

    with zipfile.ZipFile(MATRIX / "2.15" / "int_add_lite.pt2") as z:
        name = next(n for n in z.namelist() if n.endswith(".wrapper.json"))
        doc = json.loads(z.read(name))
    doc["nodes"] = []
    spec = tmp_path / "lite.wrapper.json"
    spec.write_text(json.dumps(doc))
    for command in ("validate", "inspect", "check-spec"):
        result = externspec(command, str(spec))
        assert (result.returncode, result.stderr) == (0, ""), command
        assert "no extern calls" in result.stdout, command
    named = externspec("upgrade", "--name-defaults", "--torch", "2.15", str(spec), str(tmp_path / "named.json"))
    assert (named.returncode, named.stderr) == (0, "")
    assert json.loads((tmp_path / "named.json").read_text())["nodes"] == []
