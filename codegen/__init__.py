"""externspec's code generator: Thrift IDL -> IR -> emitters, and the compatibility checker.

Installed as `externspec.codegen`; runtime code never imports it.
"""

from .errors import SchemaError
from .ir import Schema
from .lint import lint
from .parse import parse_file, parse_text


def load_schema(path: str, display_path: str | None = None) -> Schema:
    """Parse and lint an IDL file; raises `SchemaError` listing every problem."""
    from pathlib import Path

    text = Path(path).read_text(encoding="utf-8")
    schema = parse_text(text, display_path or str(path))
    lint(schema, text)
    return schema


__all__ = ["Schema", "SchemaError", "lint", "load_schema", "parse_file", "parse_text"]
