"""The `.def` data files under `include/externspec/` (the decoder's and the runtime's: messages.def)
and `include/externspec/torch/` (the torch runtime's), which the C++ sources #include with
their macros defined (X-macros) and Python reads with `entries`: one `ES_NAME(field, ...)` entry a
line; `//` comments, preprocessor lines (`#...`: the defaults of the macros) and blank lines are
ignored. A field is an identifier, a number or a string in double quotes whose only escapes are
`\\"` and `\\\\`, read as the C++ compiler reads them (any other escape is refused: both languages must
read the same text). Data both languages need is written once there (op_policy.def,
torch_enums.def)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

# The shipped C++ headers (`cpp_include.get_include()`), where the `.def` files live. Not imported
# from cpp_include: `import externspec` reads the package layout, and `python -m
# externspec.cpp_include` warns when the package's import has already imported the module it runs.
INCLUDE_DIR = Path(__file__).resolve().parent / "include"
DEF_DIR = INCLUDE_DIR / "externspec"  # tables both the decoder and the torch runtime read
TORCH_DEF_DIR = DEF_DIR / "torch"  # tables of the torch runtime

_ENTRY = re.compile(r"(ES_[A-Z_]+)\((.*)\)\Z")
_FIELD = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|(\w+))\s*(?:,|\Z)')
_ESCAPE = re.compile(r"\\(.)")


def _unescape(text: str, where: str) -> str:
    """A string field's text as the C++ compiler reads the literal: `\\"` is `"`, `\\\\` is `\\`."""
    def one(m: re.Match[str]) -> str:
        if m.group(1) not in ('"', "\\"):
            raise ValueError(f"{where}: the escape `\\{m.group(1)}` is not read (a field's escapes are \\\" and \\\\)")
        return m.group(1)
    return _ESCAPE.sub(one, text)


def _fields(text: str, where: str) -> list[str]:
    fields, pos = [], 0
    while pos < len(text):
        m = _FIELD.match(text, pos)
        if m is None:
            raise ValueError(f"{where}: cannot read the fields of `{text}`")
        fields.append(_unescape(m.group(1), where) if m.group(1) is not None else m.group(2))
        pos = m.end()
    return fields


def entries(path: Path) -> Iterator[tuple[str, str, list[str]]]:
    """(`file:line`, macro name, fields) of each entry of `path`; ValueError naming the line for
    anything else."""
    for line, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = raw.strip()
        if not text or text.startswith(("//", "#")):
            continue
        where = f"{path}:{line}"
        m = _ENTRY.match(text)
        if m is None:
            raise ValueError(f"{where}: not an entry: `{text}`")
        yield where, m.group(1), _fields(m.group(2), where)
