"""What a file is, for the readers of AOTInductor packages: a package, or something a user may take
for one (pytorch#172004: an ExportedProgram fed to a package loader failed naming a missing `.so`).

One table, `include/externspec/torch/file_kinds.def`, holds each kind's member patterns, its
description and what to do; this module and the C++ runner (`aoti_package/file_kind.cpp`, which
#includes the same file) read it. `read_package`, every command that opens an archive and the runner
decide the kind from the member names alone (`archive_kind`), before any member is read, and put it
in the error's record (`PackageError.kind`, the command line's `kind`), never only in its sentence.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from ._def_file import TORCH_DEF_DIR, entries

__all__ = ["KINDS", "KINDS_FILE", "MODEL_MEMBERS", "SPEC_OF_PACKAGE", "archive_kind", "describe"]

KINDS_FILE = TORCH_DEF_DIR / "file_kinds.def"
_ENTRIES = [(macro, fields) for _, macro, fields in entries(KINDS_FILE)]

# (kind, member pattern), in the order they decide: the first that matches a member names the kind.
_MEMBER_KINDS = tuple((fields[0], fields[1]) for macro, fields in _ENTRIES if macro == "ES_KIND_MEMBER")

# A package's compiled models: the library, its source or the extern-kernel file beside them.
MODEL_MEMBERS = tuple(pattern for kind, pattern in _MEMBER_KINDS if kind == "aoti_package")

# kind -> (what the file is, what to do). `aoti_package` is the one kind a package reader accepts.
KINDS: dict[str, tuple[str, str]] = {fields[0]: (fields[1], fields[2]) for macro, fields in _ENTRIES
                                     if macro == "ES_FILE_KIND"}


# Where a package goes instead of an executor that takes a spec (both executors say it).
SPEC_OF_PACKAGE = ("run a package with es.cpp.AOTIRunner(path), or read its spec with "
                   "externspec.aoti.read_package(path).nodes")


def archive_kind(names: Iterable[str]) -> str:
    """The kind of a zip archive with these member names (a key of `KINDS`, never `not_zip`)."""
    names = list(names)
    for kind, pattern in _MEMBER_KINDS:
        if any(fnmatch.fnmatchcase(n, pattern) for n in names):
            return kind
    return "other_zip"


def describe(kind: str) -> str:
    """`what it is; what to do`, the sentence every reader uses for a file of `kind`."""
    what, todo = KINDS[kind]
    return f"{what}; {todo}" if todo else what
