"""The names a model library imports and exports, read from its ELF section headers and dynamic
symbol table only (not its code or its weights), as the runner reads them before it opens the
library (its twin: cpp/csrc/aoti_runner/elf_symbols.cpp; tests/aoti/test_elf_symbols.py runs one
corpus over both: the same names or the same refusal). Each table is bounded (limits.def's
elf_sections and elf_table_bytes) and checked against the file's size before it is read, and read
once: a section header's size read before any bound had a 2.1 MB package inflate 4 GB, and
re-reading a deflated member from its start cost hours (issue 54 items 3 and 4)."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from .errors import PackageError
from .messages import message
from .wire.limits import ELF_SECTIONS, ELF_TABLE_BYTES

__all__ = ["ElfSymbols", "dynamic_symbols"]

_EHDR, _SHDR, _SYM = 64, 64, 24  # sizeof(Elf64_Ehdr), sizeof(Elf64_Shdr), sizeof(Elf64_Sym)
_SHT_DYNSYM, _STB_WEAK = 11, 2


@dataclass(frozen=True)
class ElfSymbols:
    imported: tuple[str, ...]  # undefined, not weak, named
    exported: tuple[str, ...]  # defined, named


class _Reader:
    """Reads of the library in `f` (`length` bytes), each checked against its size first."""

    def __init__(self, f: BinaryIO, length: int, label: str):
        self.f, self.length, self.label = f, length, label

    def fail(self, text: str) -> PackageError:
        return PackageError(text, source=self.label)

    def read(self, offset: int, size: int, what: str) -> bytes:
        if offset > self.length or size > self.length - offset:
            raise self.fail(message("ELF_OUT_OF_BOUNDS", what=what, size=size, offset=offset, length=self.length))
        self.f.seek(offset)
        data = self.f.read(size)
        if len(data) != size:
            raise self.fail(message("ELF_ENDED_EARLY"))
        return data

    def table(self, offset: int, size: int, what: str) -> bytes:
        if size > ELF_TABLE_BYTES:
            raise self.fail(message("ELF_TABLE_TOO_LARGE", what=what, size=size, limit=ELF_TABLE_BYTES))
        return self.read(offset, size, what)


def _sections(r: _Reader) -> list[tuple[int, ...]]:
    """The section headers, (sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link,
    sh_info, sh_addralign, sh_entsize) each; none when the library has no section header table."""
    header = r.read(0, _EHDR, "header")
    if header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
        raise r.fail(message("ELF_NOT_ELF64"))
    (shoff,) = struct.unpack_from("<Q", header, 0x28)
    entsize, count = struct.unpack_from("<HH", header, 0x3A)
    if count == 0:
        return []
    if entsize != _SHDR:
        raise r.fail(message("ELF_ENTRY_SIZE", what="section header table", size=entsize, want=_SHDR))
    if count > ELF_SECTIONS:
        raise r.fail(message("ELF_TOO_MANY_SECTIONS", count=count, limit=ELF_SECTIONS))
    table = r.read(shoff, count * _SHDR, "section header table")
    return [struct.unpack_from("<IIQQQQIIQQ", table, i * _SHDR) for i in range(count)]


def _named(r: _Reader, symbols: bytes, names: bytes) -> Iterator[tuple[str, int, int]]:
    """(name, st_info, st_shndx) of each named symbol of a dynamic symbol table."""
    for index in range(len(symbols) // _SYM):
        name_at, info, _, shndx = struct.unpack_from("<IBBH", symbols, index * _SYM)
        if name_at == 0:
            continue  # unnamed (the null symbol, sections)
        if name_at >= len(names):
            raise r.fail(message("ELF_NAME_OUTSIDE", index=index, offset=name_at))
        end = names.find(b"\0", name_at)
        if end < 0:
            raise r.fail(message("ELF_NAME_UNTERMINATED", index=index, offset=name_at))
        yield names[name_at:end].decode("utf-8", "backslashreplace"), info, shndx


def dynamic_symbols(f: BinaryIO, length: int, label: str) -> ElfSymbols:
    """The dynamic symbols of the ELF64 little-endian shared library in the seekable file `f` of
    `length` bytes; PackageError with `source=label` when it is not one, or a table is out of bounds,
    over a limit or malformed. A library without section headers has none."""
    r = _Reader(f, length, label)
    sections = _sections(r)
    strings: dict[int, bytes] = {}  # each string table read once
    imported: list[str] = []
    exported: list[str] = []
    for _, kind, _, _, offset, size, link, _, _, symsize in sections:
        if kind != _SHT_DYNSYM:
            continue
        if symsize != _SYM:
            raise r.fail(message("ELF_ENTRY_SIZE", what="dynamic symbol table", size=symsize, want=_SYM))
        if link >= len(sections):
            raise r.fail(message("ELF_BAD_LINK", link=link, count=len(sections)))
        if size > ELF_TABLE_BYTES:  # before the string table, as the runner checks them
            raise r.fail(message("ELF_TABLE_TOO_LARGE", what="dynamic symbol table", size=size, limit=ELF_TABLE_BYTES))
        if link not in strings:
            strings[link] = r.table(sections[link][4], sections[link][5], "dynamic string table")
        for name, info, shndx in _named(r, r.table(offset, size, "dynamic symbol table"), strings[link]):
            if shndx != 0:
                exported.append(name)
            elif info >> 4 != _STB_WEAK:
                imported.append(name)
    return ElfSymbols(tuple(imported), tuple(exported))
