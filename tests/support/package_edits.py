"""Edited copies of AOTInductor packages, for the runner's tests (tests/aoti/test_runner_*.py): a
member rewritten, renamed, dropped, deflated or recorded with another size."""

from __future__ import annotations

import json
import re
import shutil
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

# The "input" records as torch 2.11 and 2.12 write them: no `assert_size_stride(VAR, ..., "input")`
# line, only the wrapper's `check_input_N` and the symbols its run_impl binds (docs/torch-compat.md).
INPUT_ASSERT = re.compile(rb'^.*assert_size_stride\(\w+, .*, "input"\);.*\n', re.MULTILINE)


def as_torch_2_11_writes(name: str, data: bytes) -> tuple[str, bytes]:
    return name, INPUT_ASSERT.sub(b"", data) if name.endswith(".wrapper.cpp") else data


def rewrite(package: Path, out: Path, edit: Callable[[str, bytes], tuple[str, bytes] | None]) -> Path:
    """A copy of `package` with each member passed through `edit(name, data)` (None drops it)."""
    with zipfile.ZipFile(package) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            item = edit(info.filename, src.read(info.filename))
            if item is not None:
                dst.writestr(item[0], item[1])
    return out


def with_cpu_isa(package: Path, out: Path, isa: str, *, library: bytes | None = None) -> Path:
    """A copy of `package` whose metadata records the CPU ISA `isa` (`AOTI_CPU_ISA`), and whose model
    library is `library` when given (issue 54 item 2)."""
    def edit(name: str, data: bytes) -> tuple[str, bytes]:
        if name.endswith(".wrapper_metadata.json"):
            return name, json.dumps({**json.loads(data), "AOTI_CPU_ISA": isa}).encode()
        if library is not None and name.endswith(".wrapper.so"):
            return name, library
        return name, data
    return rewrite(package, out, edit)


def rename_library(new: Callable[[str], str]) -> Callable[[str, bytes], tuple[str, bytes]]:
    return lambda name, data: (new(name) if name.endswith(".wrapper.so") else name, data)


# Issue 26: every member bounded and verified before use; one bounded JSON reader; inputs the
# kernels cannot read; the library mapped once; the model's and ATen's messages.

def rewrite_deflated(package: Path, out: Path, suffix: str, data: bytes) -> Path:
    """A copy of `package` whose member ending in `suffix` holds `data`, deflated (a small
    member that inflates to `len(data)` bytes)."""
    with zipfile.ZipFile(package) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            if info.filename.endswith(suffix):
                dst.writestr(info.filename, data, compress_type=zipfile.ZIP_DEFLATED)
            else:
                dst.writestr(info.filename, src.read(info.filename))
    return out


def record_size(path: Path, suffix: str, size: int) -> None:
    """Records `size` as the stored size of the member ending in `suffix`, in its local header and
    its central-directory entry, leaving its bytes and CRC-32 as they were (a member whose
    recorded size is shorter than its data)."""
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = next(i for i in z.infolist() if i.filename.endswith(suffix))
        pos = z.start_dir  # type: ignore[attr-defined]
    struct.pack_into("<II", raw, info.header_offset + 18, size, size)
    while raw[pos:pos + 4] == b"PK\x01\x02":
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", raw, pos + 28)
        if raw[pos + 46:pos + 46 + name_len].decode().endswith(suffix):
            struct.pack_into("<II", raw, pos + 20, size, size)
        pos += 46 + name_len + extra_len + comment_len
    path.write_bytes(bytes(raw))


def add_deflated(package: Path, out: Path, member: str, data: bytes) -> Path:
    """A copy of `package` with `member` (a name inside its top folder) added, holding `data` deflated."""
    shutil.copy(package, out)
    with zipfile.ZipFile(out, "a") as z:
        top = z.namelist()[0].split("/")[0]
        z.writestr(f"{top}/{member}", data, compress_type=zipfile.ZIP_DEFLATED)
    return out
