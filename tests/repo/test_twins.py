"""docs/architecture.md's table of twins is true: each rule's Python file and C++ file exist, and
both define each function named in its row (Python by `ast`, C++ by a definition `name(` or a
`class name` in the file, comments left out)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.support.paths import REPO

ARCHITECTURE = REPO / "docs/architecture.md"
PYTHON = REPO / "python/externspec"
CPP = REPO / "python/externspec/cpp/csrc"
INCLUDE = REPO / "python/externspec/include/externspec/torch"
_ROW = re.compile(r"^\s*\| (?P<rule>[^|]+?) \| `(?P<py>[^`]+\.py)` \| `(?P<cpp>[^`]+\.cpp)` \| (?P<names>[^|]+) \|$")


def _rows() -> list[tuple[str, str, str, tuple[str, ...]]]:
    rows = []
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        m = _ROW.match(line)
        if m:
            names = tuple(re.findall(r"`(\w+)`", m["names"]))
            rows.append((m["rule"], m["py"], m["cpp"], names))
    return rows


ROWS = _rows()


def test_the_table_of_twins_is_there() -> None:
    assert len(ROWS) >= 8, f"docs/architecture.md's table of twins has {len(ROWS)} rows"


def _python_defines(path: Path) -> set[str]:
    return {n.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _cpp_defines(path: Path, name: str) -> bool:
    """In the file, its header beside it, or its installed header (`include/externspec/torch/`)."""
    headers = (path.with_suffix(".h"), INCLUDE / path.with_suffix(".h").name)
    text = "".join(re.sub(r"//[^\n]*", "", p.read_text(encoding="utf-8")) for p in (path, *headers) if p.exists())
    return re.search(rf"(\bclass {name}\b|[\w>&*:] (\w+::)?{name}\()", text) is not None


@pytest.mark.parametrize(("rule", "py", "cpp", "names"), ROWS, ids=[r[0] for r in ROWS])
def test_each_rule_is_in_the_same_named_file_with_the_same_names(rule: str, py: str, cpp: str,
                                                                  names: tuple[str, ...]) -> None:
    py_path, cpp_path = PYTHON / py, CPP / cpp
    assert py_path.exists() and cpp_path.exists(), (py_path, cpp_path)
    assert Path(py).stem == Path(cpp).stem or (Path(py).name, Path(cpp).name) == ("__init__.py", "abi.cpp"), (py, cpp)
    defined = _python_defines(py_path)
    assert [n for n in names if n not in defined] == [], f"{py} does not define them"
    assert [n for n in names if not _cpp_defines(cpp_path, n)] == [], f"{cpp} does not define them"
