"""Zip archives written byte by byte, to hold what a zip writer would not write: two directories,
two zip64 extra fields on one entry, lying sizes, names that differ in case only. Used by
tests/aoti/test_zip_crosscheck.py (the runner against miniz and zipfile) and bench_hostile."""

from __future__ import annotations

import os
import struct
import zipfile
import zlib
from dataclasses import dataclass

TOP = b"archive/"
SAT = 0xFFFFFFFF


@dataclass(frozen=True)
class Member:
    name: bytes  # inside TOP
    data: bytes
    method: int = 0  # 0 stored, 8 deflated
    flags: int = 0
    size: int | None = None  # recorded in the central directory (default: the data's)
    compressed: int | None = None
    crc: int | None = None
    extra: bytes = b""  # central-directory extra fields
    needed: int = 20  # "version needed to extract"
    top: bytes = TOP

    def payload(self) -> bytes:
        if self.method == 8:
            c = zlib.compressobj(9, zlib.DEFLATED, -15)
            return c.compress(self.data) + c.flush()
        return self.data


def zip64_extra(*fields: int) -> bytes:
    return struct.pack("<HH", 1, 8 * len(fields)) + b"".join(struct.pack("<Q", f) for f in fields)


def local_records(members: list[Member], start: int = 0) -> tuple[bytes, list[int]]:
    out, offsets = bytearray(), []
    for m in members:
        payload, name = m.payload(), m.top + m.name
        offsets.append(start + len(out))
        out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, m.flags, m.method, 0, 0, zlib.crc32(m.data),
                           len(payload), len(m.data), len(name), 0) + name + payload
    return bytes(out), offsets


def central(members: list[Member], offsets: list[int]) -> bytes:
    out = bytearray()
    for m, offset in zip(members, offsets, strict=True):
        payload, name = m.payload(), m.top + m.name
        size = len(m.data) if m.size is None else m.size
        compressed = len(payload) if m.compressed is None else m.compressed
        crc = zlib.crc32(m.data) if m.crc is None else m.crc
        out += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, m.needed, m.flags, m.method, 0, 0, crc,
                           compressed, size, len(name), len(m.extra), 0, 0, 0, 0, offset) + name + m.extra
    return bytes(out)


def eocd(count: int, size: int, offset: int, comment: bytes = b"") -> bytes:
    return struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, count, count, size, offset, len(comment)) + comment


def eocd64(count: int, size: int, offset: int) -> bytes:
    return struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, size, offset)


def locator(offset: int) -> bytes:
    return struct.pack("<4sIQI", b"PK\x06\x07", 0, offset, 1)


def archive(members: list[Member], *, zip64: bool = False, comment: bytes = b"", tail: bytes = b"") -> bytes:
    body, offsets = local_records(members)
    cd = central(members, offsets)
    end = eocd(len(members), len(cd), len(body), comment)
    if zip64:
        end = eocd64(len(members), len(cd), len(body)) + locator(len(body) + len(cd)) + end
    return body + cd + end + tail


def two_directories(clean: list[Member], other: list[Member], *, saturated_classic: bool = False) -> bytes:
    """Issue 36, 1a: the classic end record points at a directory of `clean`, a zip64 record (found
    through the locator miniz and zipfile always follow) at a second one of `other` (members of
    `clean`, the same objects, and others)."""
    extra = [m for m in other if not any(m is c for c in clean)]
    body, offsets = local_records([*clean, *extra])
    offset_of = {id(m): o for m, o in zip([*clean, *extra], offsets, strict=True)}
    first = central(clean, [offset_of[id(m)] for m in clean])
    second = central(other, [offset_of[id(m)] for m in other])
    dir1, dir2 = len(body), len(body) + len(first)
    end64 = dir2 + len(second)
    classic = eocd(0xFFFF, SAT, SAT) if saturated_classic else eocd(len(clean), len(first), dir1)
    return body + first + second + eocd64(len(other), len(second), dir2) + locator(end64) + classic


def members_of(path: str | os.PathLike[str]) -> list[Member]:
    """The members of a zip (a package torch wrote), each stored, under its own top folder."""
    with zipfile.ZipFile(path) as z:
        out = []
        for info in z.infolist():
            top, _, name = info.filename.partition("/")
            out.append(Member(name.encode(), z.read(info), top=top.encode() + b"/"))
        return out
