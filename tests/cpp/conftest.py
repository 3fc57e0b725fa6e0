"""Fixtures of the C++ tests: the conformance harness built once per backend (cached in .cache/)."""

from __future__ import annotations

import pytest

from externspec._cppbuild import build
from tests.cpp.harness import BACKENDS, CACHE, HARNESS_SOURCE, Harness, harness_flags


@pytest.fixture(scope="session", params=BACKENDS)
def harness(request: pytest.FixtureRequest) -> Harness:
    backend = request.param
    exe = build(HARNESS_SOURCE, CACHE, f"conformance_harness-{backend}", harness_flags(backend))
    return Harness(exe, backend)
