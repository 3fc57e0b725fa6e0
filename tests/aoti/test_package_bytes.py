"""Packages from memory (issue 44, item 5, its Python half; pytorch#189995): `aoti.read_package`
takes a package's bytes, and `validate`, `inspect` and `check-spec` read one piped to `-`, with the
checks and results of the path form and nothing written to disk. The runner's half (es.cpp.AOTIRunner
from bytes) is tests/aoti/test_runner_from_bytes.py."""

from __future__ import annotations

import json

import pytest

import externspec as es
from externspec import aoti
from tests.support.cli import externspec, externspec_bytes
from tests.support.paths import REPO

MATRIX = REPO / "tests" / "data" / "matrix"
OPS = str(REPO / "tests" / "support" / "matrix_ops.py")


@pytest.mark.parametrize("name", ["2.13/lite.pt2", "2.15/lite.pt2", "2.15/shim.pt2"])
def test_read_package_from_bytes_is_the_path_form(name: str) -> None:
    path = MATRIX / name
    from_path, from_bytes = aoti.read_package(path), aoti.read_package(path.read_bytes())
    assert from_bytes == from_path
    assert aoti.read_package(memoryview(path.read_bytes())) == from_path


def test_read_package_from_bytes_says_what_they_are() -> None:
    with pytest.raises(es.PackageError) as info:
        aoti.read_package(b"{}")
    assert (info.value.kind, str(info.value)) == ("not_zip", "<bytes>: not a zip archive (a .pt2 file is one): "
                                                  "truncated or not a .pt2; a package is the file "
                                                  "torch._inductor.aoti_compile_and_package writes")


@pytest.mark.parametrize("command", ["validate", "inspect", "check-spec"])
def test_a_package_on_stdin_reads_as_its_file(command: str) -> None:
    path = MATRIX / "2.13" / "lite.pt2"
    load = [] if command == "validate" else ["--load", OPS]
    piped = externspec_bytes(command, "--json", *load, "-", stdin=path.read_bytes())
    assert piped.returncode == 0, piped.stderr
    named = externspec(command, "--json", *load, str(path))
    assert named.returncode == 0, named.stderr
    got = json.loads(piped.stdout)[0]
    want = json.loads(named.stdout)[0]
    for document in want["documents"]:
        document["source"] = document["source"].replace(str(path), "-", 1)
    assert (got["file"], got["documents"]) == ("-", want["documents"])
