"""Errors of the code generator and checker, each printed as `file:line:col: message`."""

from __future__ import annotations

from .ir import SourceLoc


class SchemaError(Exception):
    """One or more problems in an IDL file. `problems` holds (location, message) pairs."""

    def __init__(self, problems: list[tuple[SourceLoc, str]]):
        self.problems = sorted(problems, key=lambda p: (p[0].file, p[0].line, p[0].col))
        super().__init__("\n".join(f"{loc}: {msg}" for loc, msg in self.problems))
