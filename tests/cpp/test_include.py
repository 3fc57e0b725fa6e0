"""`externspec.get_include()` and the compile flags point at the shipped, current headers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import externspec as es
from externspec.cpp_include import compile_flags


def test_get_include_holds_the_generated_headers() -> None:
    include = Path(es.get_include())
    names = {p.name for p in (include / "externspec").glob("*.h")}
    assert {"externspec.h", "runtime.h", "backend_nlohmann.h", "backend_simdjson.h"} <= names
    header = (include / "externspec" / "externspec.h").read_text()
    assert "@generated" in header and f"checksum<<{es.IDL_CHECKSUM}>>" in header


def test_compile_flags_per_backend() -> None:
    assert compile_flags() == ["-std=c++17", f"-I{es.get_include()}"]
    assert compile_flags("simdjson")[-1] == "-lsimdjson"
    with pytest.raises(ValueError, match="unknown C\\+\\+ JSON backend 'rapidjson'"):
        compile_flags("rapidjson")


def test_command_line_prints_the_flags() -> None:
    out = subprocess.run([sys.executable, "-m", "externspec.cpp_include", "--cflags", "simdjson"],
                         capture_output=True, text=True, check=True).stdout
    assert out.split() == compile_flags("simdjson")
