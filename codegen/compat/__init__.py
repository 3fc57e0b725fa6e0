"""The compatibility checker: a rule registry over two IRs (old, new) -> findings -> the
required version bump, compared with the SCHEMA_VERSION change (docs/versioning.md).

Each rule (`RULES`) has an id, a one-line purpose, the categories it protects (wire-JSON,
wire-binary, source), the bump it implies and a small pure check. Elements are paired by
identity (field id and name, enum number and name), never by position.
"""

from __future__ import annotations

from pathlib import Path

from .. import ir
from ..errors import SchemaError
from ..lint import lint
from ..parse import parse_text
from .model import Bump, Category, Finding, Rule
from .registry import RULES
from .report import Report, compare, find_changes, required_bump
from .verdict import Verdict, expected_version, judge


def load(path: str | Path, display_path: str | None = None, *, text: str | None = None,
         require_version: bool = True) -> ir.Schema:
    """Parse and lint one revision; `text` overrides the file's content (a git revision)."""
    src = Path(path).read_text(encoding="utf-8") if text is None else text
    schema = parse_text(src, display_path or str(path))
    lint(schema, src, require_version=require_version)
    return schema


__all__ = [
    "RULES", "Bump", "Category", "Finding", "Report", "Rule", "SchemaError", "Verdict", "compare",
    "expected_version", "find_changes", "judge", "load", "required_bump",
]
