"""Shared pytest setup: the --update-golden switch (the `golden` fixture) and the `executor`
fixture that runs one test body over both executors."""

from __future__ import annotations

import pytest

from tests.support.executors import Executor
from tests.support.golden import Golden


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
