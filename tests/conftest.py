"""Shared pytest setup: the --update-golden flag and the real torch artifacts."""

from __future__ import annotations

import pytest

from tests.support.executors import Executor


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite the expected outputs of golden tests instead of comparing")


@pytest.fixture(scope="session")
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))



@pytest.fixture(params=["python", pytest.param("cpp", marks=pytest.mark.slow)])
def executor(request: pytest.FixtureRequest) -> Executor:
    """Each executor test body runs over es.ProxyExecutor and es.cpp.ProxyExecutor (slow: builds C++)."""
    return Executor(request.param)
