"""Packages from memory (issue 44, item 5; pytorch#189995): `es.cpp.AOTIRunner` and the C++
`AOTIRunner(PackageBytes{...})` load a package from its bytes with every check the path form makes,
through the same zip reader. The same package from a path and from bytes gives equal outputs, and
every hostile or damaged package the same refusal (its class, its kind and its words, the
package's name aside).

Slow: compiles small models (cached)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import externspec as es
from tests.aoti.test_zip_crosscheck import BAD_CRC, CASES
from tests.support import cpp_models as cm
from tests.support.package_edits import rename_library, rewrite

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("extraction_root")]

MODEL = cm.MODELS["runner"]
BYTES = "<package bytes>"  # how messages name a package given as bytes


@pytest.mark.parametrize("form", [bytes, bytearray, memoryview], ids=["bytes", "bytearray", "memoryview"])
def test_a_package_from_bytes_runs_as_from_its_path(package: Path, form: Callable[[bytes], Any]) -> None:
    from_path, from_bytes = es.cpp.AOTIRunner(package), es.cpp.AOTIRunner(form(package.read_bytes()))
    assert (from_bytes.num_inputs, from_bytes.device) == (from_path.num_inputs, from_path.device)
    for n in (2, 5, 64):
        inputs = MODEL.inputs(n)
        for got, want in zip(from_bytes(*inputs), from_path(*inputs), strict=True):
            assert torch.equal(got, want)


def test_a_package_with_extern_calls_from_bytes_runs_as_from_its_path() -> None:
    path = cm.package("extern_output")
    from_path, from_bytes = es.cpp.AOTIRunner(path), es.cpp.AOTIRunner(path.read_bytes())
    assert from_bytes.call_layout == from_path.call_layout
    inputs = cm.MODELS["extern_output"].inputs(4)
    for got, want in zip(from_bytes(*inputs), from_path(*inputs), strict=True):
        assert torch.equal(got, want)


def test_the_bytes_may_change_after_the_load(blob_package: Path) -> None:
    """A buffer other than `bytes` is copied before the checks: changing it later (or from another
    thread during the load) changes nothing the runner read."""
    data = bytearray(blob_package.read_bytes())
    runner = es.cpp.AOTIRunner(data)
    data[:] = bytes(len(data))
    x, n = MODEL.inputs(4)
    torch.testing.assert_close(runner(x, n)[0], x.sin())


def _refusal(load: Callable[[], object]) -> tuple[type[BaseException], str | None, str]:
    with pytest.raises(es.ExternSpecError) as info:
        load()
    return type(info.value), getattr(info.value, "kind", None), str(info.value)


def _same_refusal(path: Path) -> None:
    """The refusal of `path`'s bytes is the path's, the package's name and the private
    directory's random name aside."""
    def words(message: str) -> str:
        return re.sub(r"externspec-aoti-\w{6}", "externspec-aoti-XXXXXX", message.replace(str(path), BYTES))

    by_path = _refusal(lambda: es.cpp.AOTIRunner(path))
    by_bytes = _refusal(lambda: es.cpp.AOTIRunner(path.read_bytes()))
    assert by_bytes[:2] == by_path[:2]
    assert words(by_bytes[2]) == words(by_path[2])


_EDITS: dict[str, Callable[[str, bytes], tuple[str, bytes] | None]] = {
    "dotdot": rename_library(lambda n: n.replace("/model/", "/model/../../x/")),
    "absolute": rename_library(lambda n: "/abs/" + n),
    "no-library": lambda name, d: None if name.endswith(".wrapper.so") else (name, d),
    "no-blob": lambda name, d: None if name.endswith(".blob") else (name, d),
    "short-blob": lambda name, d: (name, d[: len(d) // 2] if name.endswith(".blob") else d),
    "metadata-junk": lambda name, d: (name, b"\xff junk" if name.endswith("_metadata.json") else d),
    "library-junk": lambda name, d: (name, b"\x7fELF" + bytes(60) if name.endswith(".wrapper.so") else d),
}


@pytest.mark.parametrize("edit", list(_EDITS))
def test_a_hostile_package_is_refused_alike_from_bytes(blob_package: Path, tmp_path: Path, edit: str) -> None:
    _same_refusal(rewrite(blob_package, tmp_path / f"{edit}.pt2", _EDITS[edit]))


@pytest.mark.parametrize("what", ["empty", "not-a-zip", "cut", "exported-program"])
def test_what_is_not_a_package_is_named_alike_from_bytes(blob_package: Path, tmp_path: Path, what: str) -> None:
    path = tmp_path / f"{what}.pt2"
    if what == "exported-program":
        torch.export.save(torch.export.export(torch.nn.Linear(2, 2), (torch.randn(1, 2),)), path)
    else:
        raw = blob_package.read_bytes()
        path.write_bytes({"empty": b"", "not-a-zip": b"not a zip " * 10, "cut": raw[: len(raw) // 2]}[what])
    _same_refusal(path)


@pytest.mark.parametrize("case", list(CASES))
def test_every_crafted_archive_reads_or_is_refused_alike_from_bytes(case: str, tmp_path: Path) -> None:
    """test_zip_crosscheck's corpus through `es.cpp.package_members` (the runner's zip reader)."""
    make, refusal = CASES[case]
    path = tmp_path / f"{case}.pt2"
    path.write_bytes(make())
    if refusal is None or refusal is BAD_CRC:
        assert es.cpp.package_members(path.read_bytes()) == es.cpp.package_members(path)
        return
    with pytest.raises(es.PackageError, match=refusal) as by_path:
        es.cpp.package_members(path)
    with pytest.raises(es.PackageError, match=refusal) as by_bytes:
        es.cpp.package_members(path.read_bytes())
    assert str(by_bytes.value) == str(by_path.value).replace(str(path), BYTES)


def test_bytes_that_are_not_a_buffer_of_bytes_are_refused() -> None:
    with pytest.raises(TypeError, match=r"a package's bytes must be a contiguous buffer of bytes"):
        es.cpp.AOTIRunner(memoryview(bytes(8)).cast("d"))


_LOAD = """
import sys, externspec as es
path = sys.argv[2]
es.cpp.AOTIRunner(open(path, "rb").read() if sys.argv[1] == "bytes" else path)
"""


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace to see which files a load writes")
@pytest.mark.parametrize(("form", "written"), [("path", ["model.wrapper.so", "model.wrapper_weights.blob"]),
                                               ("bytes", ["model.wrapper.so"])])
def test_from_bytes_only_the_library_is_written(blob_package: Path, tmp_path: Path, form: str,
                                                written: list[str]) -> None:
    """Every file a load opens for writing (strace), in a fresh process: from bytes, the library only;
    the weight blob is read into memory (from a path it is extracted, then mapped)."""
    trace = tmp_path / "trace"
    subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat", "-o", str(trace), sys.executable, "-c", _LOAD,
                    form, str(blob_package)], check=True, capture_output=True)
    opened = re.findall(r'openat\([^"]*"([^"]+)", [^)]*O_(?:WRONLY|RDWR)', trace.read_text())
    assert sorted(Path(p).name for p in opened if "/externspec-aoti-" in p) == sorted(written)
