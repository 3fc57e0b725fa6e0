"""Fixtures of the C++ tests: the conformance harness built once per build of harness.BUILDS (cached
in .cache/)."""

from __future__ import annotations

import pytest

from tests.decoder_cpp.harness import BUILDS, CACHE, Harness, harness_flags, harness_sources
from tests.support.cppbuild import build


@pytest.fixture(scope="session", params=BUILDS)
def harness(request: pytest.FixtureRequest) -> Harness:
    name = request.param
    exe = build(harness_sources(name), CACHE, f"conformance_harness-{name}", harness_flags(name))
    return Harness(exe, name)
