"""Every file the repository's prose names exists: a comment, docstring or document that names a
source file (`executor/abi.h`, `wire/version.py`, `cpp_include.py`) names one in the tree, so a
move or a split that leaves the old name behind fails here, with the place that still says it
(issue 37: comments named modules and headers that had moved).

Read: docs/ and the top-level documents (CHANGELOG.md is history and keeps old names), the comments
of C++, CMake and Thrift files, and the comments and docstrings of Python modules (not their other
strings: tests write C++ and file names of their own). A reference is a path-like word ending in a
source extension; it resolves when a file's path ends with it at a folder boundary (`detail/version.h`
is include/externspec/detail/version.h), or with it plus `.in` (a CMake template). Names of files
that are not the repository's are listed in EXTERNAL with whose they are. Module paths are checked
the same way: a dotted externspec path names a module of the tree or a name that module defines.
"""

from __future__ import annotations

import ast
import functools
import io
import os
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

from tests.support.paths import REPO

SKIPPED_FOLDERS = {"site", "build", "__pycache__", "node_modules"}
# Text that quotes other projects' files or old names on purpose.
UNREAD = ("CHANGELOG.md", "schema/history/", "tests/codegen/cases/", "tests/compat/torch/")

EXT = r"(?:py|h|hpp|cpp|cc|cu|def|thrift|cmake)"
REFERENCE = re.compile(r"(?<![\w./*<>{}$@%-])((?:[\w-]+/)*[\w-]+\." + EXT + r")(?![\w*])")

# Names that are not files of this repository: name (or a folder prefix, ending in `/`) -> whose.
EXTERNAL = {
    "es.cpp": "the module externspec.cpp, as `import externspec as es` names it",
    "externspec.cpp": "the module itself",
    "json.hpp": "nlohmann/json", "nlohmann/": "nlohmann/json",
    "TorchConfig.cmake": "torch's CMake package",
    "generated_serialization_types.h": "torch's C++ export schema",
    "torch/_export/": "torch", "_export/": "torch", "_inductor/": "torch", "torch/_inductor/": "torch",
    "torch/testing/": "torch", "_functorch/": "torch", "collect_metadata_analysis.py": "torch's AOTAutograd",
    "c10/": "torch", "Layout.h": "c10", "MemoryFormat.h": "c10",
    "aoti_runtime/": "torch's AOTInductor runtime", "interface.h": "torch's aoti_runtime/interface.h",
    "oss_proxy_executor.cpp": "torch's proxy executor", "cpp_wrapper_cpu.py": "torch's AOTInductor codegen",
    "schema.py": "torch's torch/_export/serde/schema.py", "export_schema.thrift": "torch's export schema",
    "schema_check.py": "torch",
    "tritonserver.h": "Triton's C API (triton-inference-server/core)",
    "tritonbackend.h": "Triton's C API (triton-inference-server/core)",
    "test/inductor/": "torch's tests", "test_torchbind.py": "torch's tests",
    "wrapper.cpp": "the `<hash>.wrapper.cpp` AOTInductor writes into a package",
    "app.cpp": "a user's program (README)", "my_ops.py": "a user's op library (README)",
    "externspec_codec.cpp": "a user's codec unit (README)", "OLD.thrift": "a user's IDL (CLI usage)",
    "NEW.thrift": "a user's IDL (CLI usage)",
}


def tree() -> list[str]:
    """The repository's files (not hidden folders such as .git, .venv and .cache, nor build output)."""
    out = []
    for folder, subfolders, names in os.walk(REPO):
        subfolders[:] = [d for d in subfolders if not d.startswith(".") and d not in SKIPPED_FOLDERS]
        out += [Path(folder, name).relative_to(REPO).as_posix() for name in names]
    return sorted(out)


def python_prose(text: str) -> Iterator[tuple[int, str]]:
    """(line, text) of a Python module's comments and docstrings."""
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
                    first.value.value, str):
                for offset, line in enumerate(first.value.value.splitlines()):
                    yield first.lineno + offset, line


_C_COMMENT = re.compile(r"//.*|/\*.*|^\s*\*.*")
_HASH_COMMENT = re.compile(r"#.*")


def prose(path: str, text: str) -> Iterator[tuple[int, str]]:
    """(line, text) of what a file says in words, as the module docstring says what is read."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".py"):
        yield from python_prose(text)
        return
    if name.endswith(".md"):
        yield from enumerate(text.splitlines(), 1)
        return
    if name.endswith((".h", ".hpp", ".cpp", ".cc", ".cu", ".def", ".thrift")):
        comment = _C_COMMENT
    elif name == "CMakeLists.txt" or name.endswith(".cmake"):
        comment = _HASH_COMMENT
    else:
        return
    for number, line in enumerate(text.splitlines(), 1):
        if found := comment.search(line):
            yield number, found.group(0)


def external(reference: str) -> bool:
    return reference in EXTERNAL or any(reference.startswith(p) for p in EXTERNAL if p.endswith("/"))


def stale_references(texts: dict[str, str], files: list[str]) -> list[str]:
    """`path:line: name` for each reference in the prose of `texts` (path -> text) that names no
    file of `files` and no other project's file."""
    def exists(ref: str) -> bool:
        return any(f in (ref, ref + ".in") or f.endswith(("/" + ref, "/" + ref + ".in")) for f in files)

    return [f"{path}:{number}: {m.group(1)}"
            for path, text in texts.items() for number, line in prose(path, text)
            for m in REFERENCE.finditer(line) if not external(m.group(1)) and not exists(m.group(1))]


def prose_texts(files: list[str]) -> dict[str, str]:
    """path -> text of the files whose prose is read."""
    return {path: (REPO / path).read_text(encoding="utf-8", errors="replace") for path in files
            if not path.startswith(UNREAD) and path.endswith((".md", ".py", ".h", ".hpp", ".cpp", ".cc", ".cu",
                                                              ".def", ".thrift", ".cmake", "CMakeLists.txt"))}


def test_every_file_named_in_comments_and_docs_exists() -> None:
    files = tree()
    found = stale_references(prose_texts(files), files)
    assert not found, ("names of files that are not in the tree (fix the text, or list another project's file in "
                       "EXTERNAL):\n" + "\n".join(found))


# `externspec.<name>` words that are not module paths: name -> what they are.
NOT_MODULES = {
    "externspec.h": "the generated C++ header", "externspec.pc": "the pkg-config file",
    "externspec.op_schema": "a node metadata key", "externspec.wrapped_numbers": "a node metadata key",
    "externspec.cpp._binding": "the compiled binding (a build output, not in the tree)",
    "externspec.ttypes": "the module Apache Thrift's `thrift --gen py` writes (tests/thrift/interop/)",
}
MODULE_REFERENCE = re.compile(r"(?<![\w./-])(externspec(?:\.\w+)+)")
PACKAGES = {"externspec": REPO / "python/externspec", "externspec.codegen": REPO / "codegen"}


def module_file(dotted: str) -> Path | None:
    """The source file of the module `dotted` (a package's `__init__.py`), None if there is none."""
    prefix = max((p for p in PACKAGES if dotted == p or dotted.startswith(p + ".")), key=len, default=None)
    if prefix is None:
        return None
    base = PACKAGES[prefix].joinpath(*dotted[len(prefix) + 1:].split(".")) if dotted != prefix else PACKAGES[prefix]
    return next((f for f in (base / "__init__.py", base.with_suffix(".py")) if f.is_file()), None)


@functools.cache
def defined_names(path: Path) -> frozenset[str]:
    """The names a module defines or imports at its top level (under `if` too), star imports followed."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        for item in node.body if isinstance(node, ast.If) else [node]:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(item.name)
            elif isinstance(item, ast.Assign | ast.AnnAssign):
                targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            elif isinstance(item, ast.Import | ast.ImportFrom):
                for alias in item.names:
                    if alias.name != "*":
                        names.add((alias.asname or alias.name).split(".")[0])
                        continue
                    assert isinstance(item, ast.ImportFrom) and item.level, f"{path}: a star import"
                    folder = path.parents[item.level - 1].joinpath(*(item.module or "").split("."))
                    star = next(f for f in (folder / "__init__.py", folder.with_suffix(".py")) if f.is_file())
                    names |= defined_names(star)
    return frozenset(names)


def stale_module_references(texts: dict[str, str]) -> list[str]:
    """`path:line: name` for each dotted externspec path in the prose of `texts` whose first part past
    its longest module prefix is neither a module nor a name that module defines."""
    found = []
    for path, text in texts.items():
        for number, line in prose(path, text):
            for m in MODULE_REFERENCE.finditer(line):
                ref = m.group(1)
                parts = ref.split(".")
                known = next((i, f) for i in range(len(parts), 0, -1)
                             if (f := module_file(".".join(parts[:i]))) is not None)
                if ref in NOT_MODULES or known[0] == len(parts) or parts[known[0]] in defined_names(known[1]):
                    continue
                found.append(f"{path}:{number}: {ref}")
    return found


def test_every_module_named_in_comments_and_docs_exists() -> None:
    """A dotted externspec path in prose is a module, or a name its module defines (`externspec.wire.loads`)."""
    found = stale_module_references(prose_texts(tree()))
    assert not found, ("module paths that name nothing (fix the text, or list a word that is not a module in "
                       "NOT_MODULES):\n" + "\n".join(found))


def test_the_finder_reads_each_kind_of_prose_and_resolves_at_folder_boundaries() -> None:
    files = ["docs/x.md", "src/a.cpp", "src/b.py", "pkg/detail/version.h", "cmake/cfgConfig.cmake.in"]
    texts = {
        "docs/x.md": "see `detail/version.h`, `etail/version.h`, cfgConfig.cmake and es.cpp\n",
        "src/a.cpp": '#include "gone.h"  // moved to detail/old.h, beside version.h\n',
        "src/b.py": '"""Reads cpp/gone.py."""\n\nNAME = "written.cpp"  # and old/place.py\n',
    }
    assert stale_references(texts, files) == ["docs/x.md:1: etail/version.h", "src/a.cpp:1: detail/old.h",
                                              "src/b.py:3: old/place.py", "src/b.py:1: cpp/gone.py"]


def test_the_module_finder_follows_modules_and_their_names() -> None:
    text = ("`externspec.wire.loads`, `externspec.wire.limits.MAX_JSON_BYTES`, `externspec.Node` (a star import),"
            " `externspec.codegen.ir`; gone: `externspec.runtime`, `externspec.wire.upgrader`, `externspec.Nodes`\n")
    assert stale_module_references({"docs/x.md": text}) == [
        "docs/x.md:1: externspec.runtime", "docs/x.md:1: externspec.wire.upgrader", "docs/x.md:1: externspec.Nodes"]
