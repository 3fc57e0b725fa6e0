"""`externspec.get_include()`, the flags, and the README's compile lines, run as printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import externspec as es
from externspec.cpp_include import compile_flags, link_flags
from tests.support.cppbuild import COMPILER
from tests.support.readme_app import APP_SOURCE, DOCUMENT, compile_lines, run_compile_line


def test_get_include_holds_the_generated_headers() -> None:
    include = Path(es.get_include())
    names = {p.name for p in (include / "externspec").glob("*.h")}
    assert {"externspec.h", "wire.h", "backend_nlohmann.h", "backend_simdjson.h"} <= names
    header = (include / "externspec" / "externspec.h").read_text()
    assert "@generated" in header and f"checksum<<{es.IDL_CHECKSUM}>>" in header


def test_flags_per_backend() -> None:
    assert compile_flags() == compile_flags("simdjson") == ["-std=c++17", f"-I{es.get_include()}"]
    assert link_flags() == [] and link_flags("simdjson") == ["-lsimdjson"]
    with pytest.raises(ValueError, match="unknown C\\+\\+ JSON backend 'rapidjson'"):
        compile_flags("rapidjson")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "externspec.cpp_include", *args], capture_output=True, text=True)


def test_command_line_prints_the_flags() -> None:
    assert _cli("--cflags", "simdjson").stdout.split() == compile_flags("simdjson")
    assert _cli("--libs", "simdjson").stdout.split() == ["-lsimdjson"]
    assert _cli("--include").stdout.strip() == es.get_include()
    bad = _cli("--cflags", "rapidjson")
    assert bad.returncode == 2 and "invalid choice: 'rapidjson'" in bad.stderr


def test_a_source_checkout_has_no_cmake_package_and_says_so() -> None:
    proc = _cli("--cmake-dir")
    assert proc.returncode == 1 and proc.stdout == ""
    assert "no CMake package at" in proc.stderr and "installed by the wheel build" in proc.stderr


_DECODE_SYMBOL = ("externspec::ExternKernelNodes externspec::decode<externspec::ExternKernelNodes, "
                  "externspec::NlohmannBackend>")


@pytest.mark.slow
def test_separate_codec_units_skip_the_codec_and_link_to_one_that_has_it(tmp_path: Path) -> None:
    """EXTERNSPEC_SEPARATE_CODEC: a unit that decodes includes no json.hpp and instantiates no codec
    (decode<T> is left to the linker); the unit with EXTERNSPEC_CODEC_DEFINITIONS provides it."""
    (tmp_path / "app.cpp").write_text(APP_SOURCE % ("externspec.h", "", DOCUMENT))
    (tmp_path / "codec.cpp").write_text("#define EXTERNSPEC_CODEC_DEFINITIONS\n#include <externspec/externspec.h>\n")
    separate = [COMPILER, *compile_flags(), "-DEXTERNSPEC_SEPARATE_CODEC", "-O1", "-Wall", "-Werror"]

    def run(*args: str) -> str:
        proc = subprocess.run(list(args), cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{args}\n{proc.stderr[-4000:]}"
        return proc.stdout

    assert "nlohmann" not in run(*separate, "-M", "app.cpp")
    run(*separate, "-c", "app.cpp", "-o", "app.o")
    symbols = run("nm", "-C", "app.o").splitlines()
    assert any(line.split()[:1] == ["U"] and _DECODE_SYMBOL in line for line in symbols)
    assert not [line for line in symbols if "externspec::detail::" in line and line.split()[1] in "TW"]
    run(*separate, "-c", "codec.cpp", "-o", "codec.o")
    run(COMPILER, "app.o", "codec.o", "-o", "app")
    assert run(str(tmp_path / "app")) == "aten::relu\n"

    # The codec unit instantiates the default backend, so it cannot go without it.
    proc = subprocess.run([*separate, "-DEXTERNSPEC_NO_DEFAULT_BACKEND", "-fsyntax-only", "codec.cpp"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "do not define EXTERNSPEC_NO_DEFAULT_BACKEND" in proc.stderr


@pytest.mark.slow
def test_readme_compile_lines_work_as_printed(tmp_path: Path) -> None:
    lines = [line for line in compile_lines() if "pkg-config" not in line]  # pkg-config: tests/packaging
    assert len(lines) >= 3 and any("--libs simdjson" in line for line in lines)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for line in lines:
        run_compile_line(line, tmp_path, env)
