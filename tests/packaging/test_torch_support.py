"""The supported torch releases, written once (pyproject.toml's `torch` extra), and the build-time
refusal of a torch outside them. Two implementations of the refusal exist: the Python one
(`externspec._torch_support`: the wheel's metadata provider and es.cpp's first-use build) and
CMakeLists.txt's (a plain CMake build runs no Python); one test body runs over both."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest
import torch

from externspec import _torch_support, cpp
from externspec.errors import ExternSpecError
from tests.support.fake_torch import fake_torch
from tests.support.paths import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
REQUIREMENT = PYPROJECT["project"]["optional-dependencies"]["torch"][0]
RELEASES = _torch_support.supported_releases(REQUIREMENT)


def test_the_range_is_written_once_and_read_everywhere() -> None:
    assert RELEASES == ["2.11", "2.12", "2.13", "2.14", "2.15"]
    assert _torch_support.requirement() == REQUIREMENT
    assert REQUIREMENT in PYPROJECT["build-system"]["requires"]
    stated = f"torch {RELEASES[0]} to {RELEASES[-1]}"
    for doc in ("README.md", "docs/torch-compat.md"):
        assert stated in (REPO / doc).read_text(), f"{doc} states the supported releases ({stated})"


def python_refusal(version: str, tmp_path: Path) -> str | None:
    return _torch_support.refusal(version, REQUIREMENT)


def cmake_refusal(version: str, tmp_path: Path) -> str | None:
    torch_dir = fake_torch(tmp_path / "torch", version)
    proc = subprocess.run(["cmake", "-S", str(REPO), "-B", str(tmp_path / "build"), "-DEXTERNSPEC_PYTHON=OFF",
                           f"-DTorch_DIR={torch_dir}"], capture_output=True, text=True, timeout=300)
    return None if proc.returncode == 0 else " ".join(proc.stderr.split())  # CMake wraps its messages


REFUSALS = {"python": python_refusal, "cmake": cmake_refusal}


@pytest.mark.parametrize("version", ["2.10.3", "2.16.0", "3.13.0"])
@pytest.mark.parametrize("check", list(REFUSALS))
def test_a_torch_outside_the_range_is_refused_naming_both(check: str, version: str, tmp_path: Path) -> None:
    message = REFUSALS[check](version, tmp_path)
    assert message is not None
    releases = "2.11 and 2.12 and 2.13 and 2.14 and 2.15"
    assert f"externspec supports torch {releases} ({REQUIREMENT}), but torch {version} is installed" in message


# (a CMake package version has no local label such as +cu130)
@pytest.mark.parametrize(("check", "version"), [
    *((c, v) for c in REFUSALS for v in ("2.11.0", "2.12.1", "2.13.0", "2.14.1")),
    ("python", "2.14.1+cu130"), ("python", "2.11.0+cu130")])
def test_a_supported_torch_is_accepted(check: str, version: str, tmp_path: Path) -> None:
    assert REFUSALS[check](version, tmp_path) is None


def test_es_cpp_first_use_build_refuses_before_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch, "__version__", "2.16.0")
    with pytest.raises(ExternSpecError, match=r"cannot build es\.cpp: externspec supports torch 2\.11 and 2\.12 and "
                                              r"2\.13 and 2\.14 and 2\.15 \(torch>=2\.11,<2\.16\), but torch "
                                              r"2\.16\.0 is installed"):
        cpp.build(["-DEXTERNSPEC_NEVER_BUILT"])


@pytest.mark.parametrize("requirement", ["torch>=2.13", "torch==2.13.0", "torch>=2.13,<3.1", "numpy>=2.13,<2.15"])
def test_a_range_of_another_form_is_refused(requirement: str) -> None:
    with pytest.raises(ValueError, match="torch requirement"):
        _torch_support.supported_releases(requirement)


def _wheel_metadata(build_state: str) -> list[str]:
    _torch_support.build_state(build_state)
    try:
        return _torch_support.dynamic_metadata({}, PYPROJECT["project"])["dependencies"]
    finally:
        _torch_support.build_state("wheel")


def test_a_wheel_requires_the_torch_minor_release_it_is_built_against() -> None:
    major, minor = _torch_support.minor_release(torch.__version__)
    assert _wheel_metadata("wheel") == _wheel_metadata("metadata_wheel") == [f"torch=={major}.{minor}.*"]
    # the sdist and an editable install build es.cpp later, against the torch then imported
    assert _wheel_metadata("sdist") == _wheel_metadata("editable") == []


@pytest.mark.slow
@pytest.mark.skipif(torch.version.cuda is None, reason="a CPU build of torch: es.cpp has no CUDA path to compile")
def test_against_a_cuda_torch_es_cpp_compiles_its_cuda_path() -> None:
    """The runner's `#ifdef USE_CUDA` code is compiled and linked (c10_cuda, needed by the runtime
    library the binding links); the binding loads on a machine without a GPU (the other tests run
    CPU packages through it)."""
    extension = cpp.extension()
    assert extension.with_cuda
    # ldd follows the binding to libexternspec_runtime (beside it, or in the wheel's lib/).
    loaded = subprocess.run(["ldd", str(extension.__file__)], capture_output=True, text=True, check=True).stdout
    assert "libc10_cuda.so" in loaded and "not found" not in loaded, loaded
    # A CPU-only build refuses the device before anything else ("runs models on the CPU only"); this
    # one takes it and goes on to the package.
    with pytest.raises((ExternSpecError, RuntimeError)) as caught:
        cpp.AOTIRunner(REPO / "no-such.pt2", device="cuda:0")
    assert "CPU only" not in str(caught.value)
