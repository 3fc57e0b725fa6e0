"""What a file is, for the readers of AOTInductor packages: a package, or something a user may take
for one (pytorch#172004: an ExportedProgram fed to a package loader failed naming a missing `.so`).

One table, `include/externspec/torch/file_kinds.def`, holds each kind's description and what to
do, and the member patterns of the kinds the package layout (`package_layout.def`: a model's
members, an ExportedProgram's document) does not decide; this module and the C++ runner
(`aoti_package/file_kind.cpp`, which #includes the same files) read them. `read_package`, every
command that opens an archive and the runner decide the kind from the member names alone
(`archive_kind`), before any member is read, and put it in the error's record (`PackageError.kind`,
the command line's `kind`), never only in its sentence.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from . import package_layout
from ._def_file import TORCH_DEF_DIR, entries

__all__ = ["KINDS", "KINDS_FILE", "MODEL_MEMBERS", "SPEC_OF_PACKAGE", "archive_kind", "describe"]

KINDS_FILE = TORCH_DEF_DIR / "file_kinds.def"
_ENTRIES = [(macro, fields) for _, macro, fields in entries(KINDS_FILE)]

# A package's compiled models: the library (or, compiled with `package_cpp_only`, its source) in
# `<package>/data/aotinductor/<model>/`, with the extern-kernel file beside it when the model makes
# extern calls (torch 2.15's default mode makes none for most models and writes no such file).
MODEL_MEMBERS = tuple(package_layout.model_member(role) for role in ("library", "source", "spec"))
_EXPORTED_PROGRAM = tuple(pattern for pattern, type_name in package_layout.DOCUMENTS if type_name == "ExportedProgram")

# (kind, member pattern) of the kinds the package layout does not decide, in the order they decide.
_MEMBER_KINDS = tuple((fields[0], fields[1]) for macro, fields in _ENTRIES if macro == "ES_KIND_MEMBER")

# kind -> (what the file is, what to do). `aoti_package` is the one kind a package reader accepts.
KINDS: dict[str, tuple[str, str]] = {fields[0]: (fields[1], fields[2]) for macro, fields in _ENTRIES
                                     if macro == "ES_FILE_KIND"}


# Where a package goes instead of an executor that takes a spec (both executors say it).
SPEC_OF_PACKAGE = ("run a package with es.cpp.AOTIRunner(path), or read its spec with "
                   "externspec.aoti.read_package(path).nodes")


def archive_kind(names: Iterable[str]) -> str:
    """The kind of a zip archive with these member names (a key of `KINDS`, never `not_zip`)."""
    names = list(names)

    def has(pattern: str) -> bool:
        return any(fnmatch.fnmatchcase(n, pattern) for n in names)

    if any(has(p) for p in MODEL_MEMBERS):
        return "aoti_package"
    if any(has(p) for p in _EXPORTED_PROGRAM):
        return "exported_program"
    for kind, pattern in _MEMBER_KINDS:
        if has(pattern):
            return kind
    return "other_zip"


def describe(kind: str) -> str:
    """`what it is; what to do`, the sentence every reader uses for a file of `kind`."""
    what, todo = KINDS[kind]
    return f"{what}; {todo}" if todo else what
