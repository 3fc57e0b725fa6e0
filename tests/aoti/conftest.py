"""Fixtures of the package tests: where the C++ runner extracts a package."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


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
