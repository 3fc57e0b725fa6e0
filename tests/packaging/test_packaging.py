"""The sdist is a complete source release: every tracked file of the repository (IDL, csrc, codegen,
tests, CMake files, LICENSE). The wheel's contents are
checked where it is built (tests/packaging/)."""

from __future__ import annotations

import subprocess
import tarfile
import tomllib
from pathlib import Path

import pytest

from tests.support.paths import REPO


def _tracked_files() -> set[str]:
    proc = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True)
    if proc.returncode != 0:
        pytest.skip("not a git checkout: the tracked files are unknown")
    return {name for name in proc.stdout.decode().split("\0") if name and (REPO / name).is_file()}


def test_sdist_holds_every_tracked_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from scikit_build_core.build import build_sdist

    monkeypatch.chdir(REPO)
    name = build_sdist(str(tmp_path))
    with tarfile.open(tmp_path / name) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if m.isfile()}
    assert _tracked_files() - members == set()
    assert {"LICENSE", "CMakeLists.txt", "schema/externspec.thrift",
            "python/externspec/cpp/csrc/executor/proxy_executor.cpp"} <= members


def test_license_is_an_spdx_expression_with_its_file() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License") and "the externspec authors" in text
