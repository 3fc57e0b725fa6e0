"""The backend's refusal of a server with another backend API: `TRITONBACKEND_Initialize` accepts the
major declared in triton_api.h with a minor at least the declared one, and refuses any other with
UNSUPPORTED and both versions named. A real server reports only its own version (1.19 for 2.51.0),
so api_version_harness.cpp stands in for the server: it reports the version it is given and loads
the built backend as the server does."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from externspec._cache import cache_dir
from externspec.triton import BACKEND_SOURCE, LIBRARY, backend_dir
from tests.support.cppbuild import build

pytestmark = pytest.mark.slow

HARNESS = Path(__file__).with_name("api_version_harness.cpp")


@pytest.fixture(scope="module")
def harness() -> Path:
    return build(HARNESS, cache_dir() / "cpp" / "triton_api_harness", "api_version_harness",
                 ["-std=c++17", "-O1", "-rdynamic", f"-I{BACKEND_SOURCE}", "-ldl"],
                 extra_deps=[BACKEND_SOURCE / "triton_api.h"])


def _run(harness: Path, *args: str) -> str:
    proc = subprocess.run([str(harness), *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_initialize_accepts_the_declared_major_and_refuses_another(harness: Path) -> None:
    major, minor = map(int, _run(harness, "--declared").split())
    library = str(backend_dir() / "externspec" / LIBRARY)
    accepted = [(major, minor), (major, minor + 3)]
    refused = [(major + 1, 0), (major + 1, minor), (major, minor - 1)] + ([(major - 1, minor)] if major else [])
    for version in accepted:
        assert _run(harness, library, *map(str, version)) == "accepted", version
    for server_major, server_minor in refused:
        assert _run(harness, library, str(server_major), str(server_minor)) == (
            f"refused UNSUPPORTED externspec backend: the server's backend API is {server_major}.{server_minor}, "
            f"this backend was built for {major}.{minor} (the major must be equal, the minor at least that)")
