"""Shared pytest setup: the --update-golden switch (the `golden` fixture), the `executor`
fixture that runs one test body over both executors, and each worker's own temporary root."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.executors import Executor
from tests.support.golden import Golden


def pytest_configure(config: pytest.Config) -> None:
    """Each process (an xdist worker, or pytest alone) gets its own temporary root ($TMPDIR, which the
    C++ runner and every subprocess read): what one worker leaves is found by that worker's check,
    never raced by another's (`worker_temp_root`)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    os.environ["TMPDIR"] = tempfile.mkdtemp(prefix=f"externspec-tests-{worker}-")
    tempfile.tempdir = None  # Python's tempfile reads $TMPDIR again


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(os.environ["TMPDIR"], ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def worker_temp_root() -> Iterator[Path]:
    """This process's temporary root (removed when pytest ends); at the end of the session, nothing
    the runner extracted is left in it (on the CPU a runner removes its folder once the model is
    loaded; tests/aoti's `extraction_root` checks each test)."""
    root = Path(os.environ["TMPDIR"])
    yield root
    left = sorted(p.name for p in root.glob("externspec-aoti-*"))
    assert not left, f"the runner left {left} in {root}"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite the expected outputs of golden tests instead of comparing")


@pytest.fixture(scope="session")
def golden(request: pytest.FixtureRequest) -> Golden:
    """Expected files: compared, or rewritten under --update-golden (every golden test, one switch)."""
    return Golden(bool(request.config.getoption("--update-golden")))


@pytest.fixture(params=["python", pytest.param("cpp", marks=pytest.mark.slow)])
def executor(request: pytest.FixtureRequest) -> Executor:
    """Each executor test body runs over es.ProxyExecutor and es.cpp.ProxyExecutor (slow: builds C++)."""
    return Executor(request.param)
