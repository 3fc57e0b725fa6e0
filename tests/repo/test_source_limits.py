"""Modules small enough to read in one sitting (issue 37): every hand-written Python and C++ source under
python/, codegen/ and benchmarks/ is under MAX_FILE_LINES lines, and every function (Python: ast; C++: a
brace-depth scan) under MAX_FUNCTION_LINES, except those ALLOWED names with the reason.

Generated files (`_generated/`, and any file carrying the codegen's "@generated" banner, as
include/externspec/externspec.h) are the generator's output, not read here; tests/ is not either.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.paths import REPO

MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 60
ROOTS = ("python", "codegen", "benchmarks")
PYTHON = {".py"}
CPP = {".h", ".hpp", ".cpp", ".cc", ".cu", ".inc"}

# Functions allowed over MAX_FUNCTION_LINES: "path::qualified name" -> why.
ALLOWED = {
    "python/externspec/abi/proxy_executor.py::ProxyExecutor.call_function":
        "the call hot path: every extern call of a model runs it, inlined so a call makes no extra Python "
        "frame per argument (docs/performance.md)",
    "python/externspec/cpp/csrc/aoti_runner/input_checks.cpp::InputChecks::check":
        "the call hot path: it runs before every forward, its passing path with no allocation and no call "
        "out of the loop over the inputs",
}


def _sources() -> list[Path]:
    files = []
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*")):
            if path.suffix not in PYTHON | CPP or not path.is_file() or "_generated" in path.parts:
                continue
            if "@generated" in path.read_text(encoding="utf-8", errors="replace")[:1000]:
                continue
            files.append(path)
    return files


SOURCES = _sources()


def _name(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def python_functions(text: str) -> Iterator[tuple[str, int, int]]:
    """(qualified name, first line, line count) of every function and method, nested ones too."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                yield name, child.lineno, (child.end_lineno or child.lineno) - child.lineno + 1
                yield from walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(ast.parse(text), "")


# What a C++ scan blanks before counting braces: comments, raw strings, string and char literals,
# preprocessor lines (with their continuations). Newlines are kept so line numbers hold.
_CPP_NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|R"([^(\s]*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''
                        r"|^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.S | re.M)
_SCOPE = re.compile(r"(?:namespace|class|struct|union|enum|extern)\b")


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def cpp_functions(text: str) -> Iterator[tuple[str, int, int]]:
    """(name, first line, line count) of every C++ function body outside another function: a `{`
    whose head (the text since the last `;`, `{` or `}`) holds a `)` and is no scope or
    initializer. Braces inside parentheses (a default argument `= {}`) are part of the head; lambdas
    and local classes count as part of the function around them."""
    code = _CPP_NOISE.sub(_blank, text)
    head_start, i = 0, 0
    while i < len(code):
        c = code[i]
        if c in ";}":
            head_start = i + 1
        elif c == "{":
            head = code[head_start:i]
            end = _matching_brace(code, i)
            if head.count("(") > head.count(")"):
                i = end  # inside an argument list: the head goes on
            elif ")" in head and not _SCOPE.match(_declaration(head)) and not head.rstrip().endswith("="):
                first = code.count("\n", 0, i) + 1
                name = re.findall(r"(operator\s*[^\s(]+|[~\w:]+)\s*\(", head)
                yield (name[0] if name else "?"), first, code.count("\n", i, end) + 1
                i, head_start = end, end + 1
            else:
                head_start = i + 1  # a scope: its members are scanned as the file's
        i += 1


def _declaration(head: str) -> str:
    """`head` without its `template <...>` prefixes (whose `class T` names no scope)."""
    rest = head.strip()
    while rest.startswith("template"):
        depth, start = 0, rest.index("<")
        close = start
        for close in range(start, len(rest)):
            depth += {"<": 1, ">": -1}.get(rest[close], 0)
            if depth == 0:
                break
        rest = rest[close + 1 :].lstrip()
    return rest


def _matching_brace(code: str, start: int) -> int:
    depth = 0
    for j in range(start, len(code)):
        depth += {"{": 1, "}": -1}.get(code[j], 0)
        if depth == 0:
            return j
    raise AssertionError(f"unbalanced braces from offset {start}")


def functions(path: Path) -> list[tuple[str, int, int]]:
    text = path.read_text(encoding="utf-8")
    return list(python_functions(text) if path.suffix in PYTHON else cpp_functions(text))


def test_the_scan_reads_the_tree() -> None:
    """The globs find both languages, the generated header is left out, and the C++ scan finds
    functions where they are (a method in a class, a free function in a namespace, a template)."""
    names = {_name(p) for p in SOURCES}
    assert {"python/externspec/abi/proxy_executor.py", "codegen/emit_cpp.py",
            "python/externspec/include/externspec/wire.h"} <= names
    assert "python/externspec/include/externspec/externspec.h" not in names
    assert not any("_generated" in n for n in names)
    found = {n for p in SOURCES if p.suffix in CPP for n, _, _ in functions(p)}
    assert {"plan_key_merge", "write_double", "render", "part_at_field"} <= found


def test_cpp_scan_on_a_known_shape() -> None:
    text = ('namespace a {\nstruct S {\n  int f(int x) const {\n    if (x) { return 1; }\n    return 0;\n  }\n};\n'
            'constexpr int k[] = {1, 2};\n#define M(x) { x }\nauto s = R"({)";\n'
            'template <class T>\nvoid g(T t) noexcept {\n  auto l = [](int y) { return y; };  // }\n  l(1);\n}\n'
            'S::S() : v_(1) {}\n}  // namespace a\n')
    assert list(cpp_functions(text)) == [("f", 3, 4), ("g", 12, 4), ("S::S", 16, 1)]


def test_python_scan_names_methods_and_nested_functions() -> None:
    text = "class A:\n    def m(self):\n        def inner():\n            pass\n        return inner\n"
    assert list(python_functions(text)) == [("A.m", 2, 4), ("A.m.inner", 3, 2)]


@pytest.mark.parametrize("path", SOURCES, ids=_name)
def test_file_is_under_the_line_limit(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines < MAX_FILE_LINES, f"{_name(path)}: {lines} lines; split it by question (issue 37)"


def test_functions_are_under_the_line_limit() -> None:
    over = {f"{_name(p)}::{name}": (first, count) for p in SOURCES for name, first, count in functions(p)
            if count > MAX_FUNCTION_LINES}
    unexplained = [f"{key} (line {first}): {count} lines" for key, (first, count) in over.items() if key not in ALLOWED]
    assert not unexplained, "functions over the limit; split them into named steps:\n" + "\n".join(unexplained)
    stale = set(ALLOWED) - set(over)
    assert not stale, f"ALLOWED names functions no longer over the limit: remove them: {sorted(stale)}"
