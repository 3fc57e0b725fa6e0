"""es.cpp's first use in a source checkout runs CMakeLists.txt, the build the wheel and CMake users
run, into a cache folder named by a hash of everything that build reads."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import torch

from externspec import cpp
from externspec._cache import cache_dir
from externspec.cpp import _cmake, binding

# One file of each kind the build reads: build files, the binding's sources, the shipped headers.
EDITS = ["CMakeLists.txt", "cmake/externspecCuda.cmake", f"{_cmake.CSRC}/executor/abi.cpp",
         "python/externspec/include/externspec/wire.h", "python/externspec/include/externspec/detail/codec.h"]


def test_the_cache_name_changes_with_each_file_the_build_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for relative in _cmake.BUILD_INPUTS:
        source = _cmake.SOURCE_ROOT / relative
        copy = shutil.copytree if source.is_dir() else shutil.copyfile
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        copy(source, tmp_path / relative)
    monkeypatch.setattr(_cmake, "SOURCE_ROOT", tmp_path)
    names = {binding._source_hash([])}
    for relative in EDITS:
        with (tmp_path / relative).open("a") as f:
            f.write("\n")
        names.add(binding._source_hash([]))
    names.add(binding._source_hash(["-O1"]))
    assert len(names) == len(EDITS) + 2


def test_the_cache_name_follows_the_interpreters_abi_and_torchs_build_not_the_micro_release(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Triton's Python backend stub (the system's Python 3.11.2) loads the build of a venv's 3.11.7:
    CPython keeps its ABI across micro releases, and EXT_SUFFIX names what it depends on."""
    name = binding._source_hash([])
    monkeypatch.setattr(sys, "version_info", (*sys.version_info[:2], sys.version_info[2] + 1, "final", 0))
    assert binding._source_hash([]) == name
    names = {name}
    monkeypatch.setitem(sysconfig.get_config_vars(), "EXT_SUFFIX", ".cpython-311d-x86_64-linux-gnu.so")  # debug
    names.add(binding._source_hash([]))
    monkeypatch.setattr(torch, "__version__", f"{torch.__version__.split('+')[0]}+cu128")
    names.add(binding._source_hash([]))
    monkeypatch.setattr(torch.version, "git_version", "0" * 40)
    names.add(binding._source_hash([]))
    assert len(names) == 4


@pytest.mark.slow
@pytest.mark.skipif(cpp.prebuilt() is not None, reason="an installed wheel: es.cpp is prebuilt")
def test_a_checkout_builds_the_binding_that_cmakelists_describes() -> None:
    library = Path(cpp.extension().__file__ or "")
    assert library.parent.parent == cache_dir() / "cpp"
    assert "CMAKE_PROJECT_NAME:STATIC=externspec" in (library.parent / "CMakeCache.txt").read_text()
    # The wheel's shape: a thin binding over the runtime library.
    needed = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True, check=True).stdout
    assert "[libexternspec_runtime.so" in needed, needed  # .so.0 in a build outside a wheel


@pytest.mark.slow
def test_runtime_cmake_dir_finds_the_runtime_library_es_cpp_has_loaded(tmp_path: Path) -> None:
    from torch.utils import cmake_prefix_path

    cpp.extension()
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(probe LANGUAGES CXX)\n"
        "find_package(externspec CONFIG REQUIRED COMPONENTS runtime)\n"
        "get_target_property(location externspec::runtime IMPORTED_LOCATION_RELEASE)\n"
        'message(STATUS "runtime=${location}")\n')
    out = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build"),
                          f"-Dexternspec_DIR={cpp.runtime_cmake_dir()}", f"-DCMAKE_PREFIX_PATH={cmake_prefix_path}"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    location = Path(out.stdout.split("-- runtime=")[1].splitlines()[0])
    maps = Path("/proc/self/maps").read_text().splitlines()
    loaded = {Path(line.split()[-1]) for line in maps if "libexternspec_runtime" in line}
    assert loaded == {location.resolve()}
