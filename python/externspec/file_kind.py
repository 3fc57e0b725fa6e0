"""What a file is, for the readers of AOTInductor packages: a package, or something a user may take
for one (pytorch#172004: an ExportedProgram fed to a package loader failed naming a missing `.so`).

One table (`KINDS`) holds each kind's description and what to do; `read_package`, every command
that opens an archive and the C++ runner (`aoti_package/file_kind.cpp`, the same names and words,
held to this table by tests/aoti/test_file_kind.py) decide the kind from the member names alone
(`archive_kind`), before any member is read, and put it in the error's record (`PackageError.kind`,
the command line's `kind`), never only in its sentence.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from . import package_layout

COMPILE = "torch._inductor.aoti_compile_and_package"

# A package's compiled models: the library (or, compiled with `package_cpp_only`, its source) in
# `<package>/data/aotinductor/<model>/`, with the extern-kernel file beside it when the model makes
# extern calls (torch 2.15's default mode makes none for most models and writes no such file).
MODEL_MEMBERS = tuple(package_layout.model_member(role) for role in ("library", "source", "spec"))

# kind -> (what the file is, what to do). `aoti_package` is the one kind a package reader accepts.
KINDS: dict[str, tuple[str, str]] = {
    "aoti_package": ("an AOTInductor package", ""),
    "exported_program": (
        "an ExportedProgram saved by torch.export.save, not an AOTInductor package",
        f"compile it into one with {COMPILE}(torch.export.load(path), package_path=...)"),
    "torchscript": (
        "a TorchScript archive (torch.jit.save), not an AOTInductor package",
        f"export the model with torch.export.export and compile it with {COMPILE}"),
    "torch_save": (
        "a file saved by torch.save, not an AOTInductor package",
        f"export the model with torch.export.export and compile it with {COMPILE}"),
    "other_zip": (
        "a zip archive that is not an AOTInductor package (it has no */data/aotinductor/*/*.wrapper.so)",
        f"a package is the file {COMPILE} writes"),
    "not_zip": (
        "not a zip archive (a .pt2 file is one): truncated or not a .pt2",
        f"a package is the file {COMPILE} writes"),
}


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
    if any(has(pattern) for pattern, type_name in package_layout.DOCUMENTS if type_name == "ExportedProgram"):
        return "exported_program"
    if has("*/code/*") or has("*/constants.pkl"):
        return "torchscript"
    if has("*/data.pkl"):
        return "torch_save"
    return "other_zip"


def describe(kind: str) -> str:
    """`what it is; what to do`, the sentence every reader uses for a file of `kind`."""
    what, todo = KINDS[kind]
    return f"{what}; {todo}" if todo else what
