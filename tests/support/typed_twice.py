"""Message fragments typed by hand in both languages: the measure of issue 46 item 1.

A fragment is a piece of text between the values a message interpolates: the constant parts of a
Python string literal or f-string (by `ast`), and each C++ string literal (by a scan of the text
without comments). A fragment of at least `MIN_WORDS` words is typed twice when it occurs, with
whitespace collapsed, inside a fragment of the other language. Generated files do not count (they
are written once, by codegen/), nor do the `.def` tables both languages read, tests, benchmarks or
examples.

    python -m tests.support.typed_twice [root]     # prints each fragment with where it is typed
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

MIN_WORDS = 4

PYTHON_ROOTS = ("python/externspec",)
CPP_ROOTS = ("python/externspec/cpp/csrc", "python/externspec/include/externspec", "python/externspec/triton/backend")
GENERATED = ("python/externspec/_generated/", "python/externspec/include/externspec/externspec.h")

_CPP_TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|R"(?P<delim>[^(]*)\((?P<raw>.*?)\)(?P=delim)"'
                        r'|"(?P<text>(?:[^"\\\n]|\\.)*)"|\'(?:[^\'\\\n]|\\.)*\'', re.S)
_CPP_ESCAPE = re.compile(r"\\(.)")


def _norm(text: str) -> str:
    return " ".join(text.split())


def python_fragments(path: Path) -> Iterator[str]:
    """The constant parts of every string literal in `path` (docstrings and f-string format specs
    left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    specs = {id(v.format_spec) for v in ast.walk(tree) if isinstance(v, ast.FormattedValue) and v.format_spec}
    for node in ast.walk(tree):
        if id(node) in docstrings or id(node) in specs:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield _norm(node.value)


def cpp_fragments(path: Path) -> Iterator[str]:
    """Every string literal in `path`, comments skipped."""
    for m in _CPP_TOKEN.finditer(path.read_text(encoding="utf-8", errors="replace")):
        if m.group("raw") is not None:
            yield _norm(m.group("raw"))
        elif m.group("text") is not None:
            yield _norm(_CPP_ESCAPE.sub(r"\1", m.group("text")))


def _sources(root: Path, roots: tuple[str, ...], suffixes: tuple[str, ...]) -> Iterator[Path]:
    for top in roots:
        for path in sorted((root / top).rglob("*")):
            rel = path.relative_to(root).as_posix()
            if path.suffix in suffixes and not any(rel.startswith(g) for g in GENERATED):
                yield path


def typed_twice(root: Path) -> dict[str, tuple[str, str]]:
    """{fragment: (a Python file, a C++ file)} for each fragment typed in both languages."""
    py: dict[str, str] = {}
    for path in _sources(root, PYTHON_ROOTS, (".py",)):
        for f in python_fragments(path):
            py.setdefault(f, path.relative_to(root).as_posix())
    cpp: dict[str, str] = {}
    for path in _sources(root, CPP_ROOTS, (".cpp", ".h", ".inc")):
        for f in cpp_fragments(path):
            cpp.setdefault(f, path.relative_to(root).as_posix())
    found: dict[str, tuple[str, str]] = {}
    for mine, other, python_first in ((py, cpp, True), (cpp, py, False)):
        for frag, where in mine.items():
            if len(frag.split()) < MIN_WORDS or frag in found:
                continue
            hit = next((w for text, w in other.items() if frag in text), None)
            if hit is not None:
                found[frag] = (where, hit) if python_first else (hit, where)
    return found


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[2]
    found = typed_twice(root)
    for frag, (py, cpp) in sorted(found.items(), key=lambda kv: kv[1]):
        print(f"{py} | {cpp} | {frag!r}")
    print(f"{len(found)} fragments typed in both languages")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
