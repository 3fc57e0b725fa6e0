"""Fixtures of the package tests: where the C++ runner extracts a package; the runner model's
packages (weights in the library, in a blob) and a runner of the second."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import externspec as es
from tests.support import cpp_models as cm


@pytest.fixture
def extraction_root(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The folder the C++ runner extracts packages under ($TMPDIR, read at each load), this test's own:
    a check that the runner removes what it extracted sees this test's folders and no other worker's
    (a glob of the shared /tmp/externspec-aoti-* raced with the other xdist worker). Empty when the
    test ends: on the CPU a runner removes its folder once the model is loaded."""
    root = tmp_path_factory.mktemp("extract")
    monkeypatch.setenv("TMPDIR", str(root))
    yield root
    left = sorted(p.name for p in root.iterdir())
    assert not left, f"the runner left {left} in {root}"


@pytest.fixture(scope="session", params=["runner", "runner_blob"], ids=["weights-in-library", "weights-in-blob"])
def package(request: pytest.FixtureRequest) -> Path:
    return cm.package(request.param)


@pytest.fixture(scope="session")
def blob_package() -> Path:
    return cm.package("runner_blob")


@pytest.fixture(scope="session")
def runner(blob_package: Path) -> es.cpp.AOTIRunner:
    return es.cpp.AOTIRunner(blob_package)
