"""Shared pytest setup: the --update-golden flag, the real torch artifacts, and the `make_executor`
fixture that runs one test body over both executors."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.executors import Executor


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite the expected outputs of golden tests instead of comparing")


@pytest.fixture(scope="session")
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(params=["python", "cpp"])
def make_executor(request: pytest.FixtureRequest) -> Any:
    """The executor class under test: es.ProxyExecutor or es.cpp.ProxyExecutor (same interface)."""
    import externspec as es

    return es.ProxyExecutor if request.param == "python" else es.cpp.ProxyExecutor


@pytest.fixture(params=["python", pytest.param("cpp", marks=pytest.mark.slow)])
def executor(request: pytest.FixtureRequest) -> Executor:
    """Each executor test body runs over es.ProxyExecutor and es.cpp.ProxyExecutor (slow: builds C++)."""
    return Executor(request.param)
