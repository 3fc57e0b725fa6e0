"""A model library's ELF tables are read bounded and once, alike in both languages (issue 54 items 3
and 4): Python's externspec.elf_symbols (`check-spec --runtimes`) and the runner's aoti_runner/elf_symbols.cpp
(through es.cpp's binding) read one corpus of libraries, real and crafted, to the same names or the
same refusal. Before: a section size read before any bound made a 2.1 MB package inflate 4 GB in
`check-spec --runtimes`, a missing linked section or a name without NUL was an "internal error", and
seeking back in a deflated member re-inflated it from its start for each table."""

from __future__ import annotations

import json
import os
import struct
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

import externspec as es
from externspec import elf_symbols
from externspec.wire.limits import ELF_SECTIONS, ELF_TABLE_BYTES
from tests.support import matrix
from tests.support.cli import externspec

PACKAGE = matrix.package("2.13", "shim")  # imports aoti_torch_cpu_grid_sampler_3d


def _library() -> bytes:
    with zipfile.ZipFile(PACKAGE) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".wrapper.so")]
        return z.read(name)


def _dynsym(data: bytes) -> int:
    """The offset of the dynamic symbol table's section header."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    count, = struct.unpack_from("<H", data, 0x3C)
    return next(shoff + i * 64 for i in range(count) if struct.unpack_from("<I", data, shoff + i * 64 + 4)[0] == 11)


def _edit(fmt: str, where: Callable[[bytes], int], value: int) -> Callable[[bytes], bytes]:
    def edit(data: bytes) -> bytes:
        out = bytearray(data)
        struct.pack_into(fmt, out, where(data), value)
        return bytes(out)
    return edit


def _dynstr_without_nul(data: bytes) -> bytes:
    out = bytearray(data)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    link, = struct.unpack_from("<I", data, _dynsym(data) + 0x28)
    offset, size = struct.unpack_from("<QQ", data, shoff + link * 64 + 0x18)
    out[offset:offset + size] = b"x" * size
    return bytes(out)


# name -> the library's bytes made from a real one; and the refusal's message name (None: read).
CORPUS: dict[str, tuple[Callable[[bytes], bytes], str | None]] = {
    "torch's library": (lambda d: d, None),
    "not ELF": (lambda d: b"\xff\xfe junk" + d[9:], "not a 64-bit"),
    "32-bit": (lambda d: d[:4] + b"\x01" + d[5:], "not a 64-bit"),
    "big-endian": (lambda d: d[:5] + b"\x02" + d[6:], "not a 64-bit"),
    "cut in its header": (lambda d: d[:40], "its ELF header (64 bytes at offset 0) lies outside its 40 bytes"),
    "no section headers": (_edit("<H", lambda d: 0x3C, 0), None),
    "section header size": (_edit("<H", lambda d: 0x3A, 40), "records entries of 40 bytes, not 64"),
    "65535 sections": (_edit("<H", lambda d: 0x3C, 65535), f"records 65535 sections, over the limit of {ELF_SECTIONS}"),
    "sections past the end": (_edit("<Q", lambda d: 0x28, 1 << 40), "section header table"),
    # the finding: a dynamic symbol table's size read and inflated before any bound (4 GB)
    "a 4 GiB symbol table": (_edit("<Q", lambda d: _dynsym(d) + 0x20, 1 << 32),
                             f"dynamic symbol table of 4294967296 bytes is over the limit of {ELF_TABLE_BYTES}"),
    "a symbol table past the end": (_edit("<Q", lambda d: _dynsym(d) + 0x18, 1 << 24), "lies outside"),
    "symbol entry size": (_edit("<Q", lambda d: _dynsym(d) + 0x38, 16), "records entries of 16 bytes, not 24"),
    # the finding: IndexError surfaced as "internal error"
    "a missing linked section": (_edit("<I", lambda d: _dynsym(d) + 0x28, 999), "links section 999"),
    # the finding: ValueError surfaced as "internal error"
    "a name without NUL": (_dynstr_without_nul, "with no terminating NUL"),
    "a string table past the end": (lambda d: _edit("<Q", lambda x: struct.unpack_from("<Q", x, 0x28)[0]
                                                    + struct.unpack_from("<I", x, _dynsym(x) + 0x28)[0] * 64 + 0x18,
                                                    len(d))(d), "dynamic string table"),
}


def python_reader(path: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    with open(path, "rb") as f:
        symbols = elf_symbols.dynamic_symbols(f, path.stat().st_size, "lib.so")
    return symbols.imported, symbols.exported


def cpp_reader(path: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    imported, exported = es.cpp.extension().elf_dynamic_symbols(str(path), "lib.so")
    return tuple(imported), tuple(exported)


READERS = {"python": python_reader, "c++": cpp_reader}


@pytest.mark.parametrize("case", CORPUS)
def test_both_readers_read_the_same_names_or_refuse_alike(case: str, tmp_path: Path) -> None:
    make, refusal = CORPUS[case]
    path = tmp_path / "lib.so"
    path.write_bytes(make(_library()))
    outcomes = {}
    for name, reader in READERS.items():
        try:
            outcomes[name] = ("read", reader(path))
        except es.PackageError as e:
            outcomes[name] = ("refused", str(e))
    assert outcomes["python"] == outcomes["c++"], outcomes
    verdict, value = outcomes["python"]
    if refusal is None:
        assert verdict == "read", value
    else:
        assert verdict == "refused" and str(value).startswith("lib.so: ") and refusal in str(value), value
    if case == "torch's library":
        imported, exported = value  # type: ignore[misc]
        assert "aoti_torch_cpu_grid_sampler_3d" in imported and "AOTInductorModelContainerRun" in exported
    if case == "no section headers":
        assert value == ((), ())


def _package_with_library(tmp_path: Path, name: str, library: bytes, *, deflate: bool = False) -> Path:
    out = tmp_path / f"{name}.pt2"
    with zipfile.ZipFile(PACKAGE) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = library if info.filename.endswith(".wrapper.so") else src.read(info)
            dst.writestr(info.filename, data, zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED)
    return out


def test_check_spec_bounds_the_library_member_before_inflating_it(tmp_path: Path) -> None:
    """The finding's package: a library member that inflates far past the package (here 256 MiB of
    zeros behind an ELF header, 0.3 MB deflated) is refused from its recorded size against the
    runner's budget (16 times the package), before a byte is inflated; the next file is checked."""
    library = _library()
    bomb = _package_with_library(tmp_path, "bomb", library[:64] + bytes(256 << 20), deflate=True)
    assert bomb.stat().st_size < 1 << 20
    start = time.monotonic()
    out = externspec("check-spec", "--runtimes", "--format", "json", str(bomb), str(PACKAGE))
    assert time.monotonic() - start < 60
    results = json.loads(out.stdout)
    assert [r["ok"] for r in results] == [False, True], out.stdout
    (error,) = results[0]["errors"]
    assert "over the limit" in error["message"] and "max_extracted_bytes" in error["message"], error
    assert ".wrapper.so" in error.get("source", "") + error["message"]
    text = externspec("check-spec", "--runtimes", str(bomb))
    assert text.returncode == 1 and "internal error" not in text.stderr and ".wrapper.so" in text.stderr


@pytest.mark.parametrize("case", ["a missing linked section", "a name without NUL", "a 4 GiB symbol table"])
def test_a_malformed_library_is_a_package_error_in_every_format(case: str, tmp_path: Path) -> None:
    make, refusal = CORPUS[case]
    package = _package_with_library(tmp_path, "bad", make(_library()), deflate=True)
    out = externspec("check-spec", "--runtimes", "--format", "json", str(package), str(PACKAGE))
    results = json.loads(out.stdout)
    assert [r["ok"] for r in results] == [False, True], out.stdout
    assert refusal and refusal in results[0]["errors"][0]["message"]
    with pytest.raises(es.PackageError, match=r"\.wrapper\.so"):
        es.cpp.AOTIRunner(package)
    assert "internal error" not in externspec("check-spec", "--runtimes", str(package)).stderr


def test_a_deflated_library_is_inflated_once(tmp_path: Path) -> None:
    """Tables read from a deflated member seeked back and re-inflated it from its start: each table is
    now read from one inflated copy. 4,000 sections at the end of a 4 MiB deflated library (of bytes
    that do not compress, within the extraction budget) cost one inflation (they took hours at 65,535)."""
    library = bytearray(_library() + os.urandom(4 << 20))
    struct.pack_into("<H", library, 0x3C, 4000)
    struct.pack_into("<Q", library, 0x28, len(library) - 4000 * 64)
    package = _package_with_library(tmp_path, "many", bytes(library), deflate=True)
    start = time.monotonic()
    out = externspec("check-spec", "--runtimes", "--format", "json", str(package))
    assert time.monotonic() - start < 60, "re-inflated"
    (result,) = json.loads(out.stdout)
    assert result["ok"], result  # the sections hold no symbol table: nothing imported
