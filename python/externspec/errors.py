"""The errors externspec raises for bad input, all under `ExternSpecError`.

`DecodeError` carries every problem found in a document, each with a *kind* (what went wrong),
its JSON path and a message in externspec's own words (docs/wire-format.md). The kinds are the
keys of `ERROR_KINDS`: one table, which also classifies the messages of the C++ decoder and the
Thrift codecs (they use the same wording), so every error has a kind whichever decoder found it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TypedDict


class ExternSpecError(Exception):
    """Base of every error externspec raises for bad input (a spec, a file, call arrays)."""


class ErrorDetail(TypedDict):
    """One problem of a document, as `DecodeError.errors()` lists it (like pydantic's `errors()`)."""

    kind: str  # a key of ERROR_KINDS
    path: str  # JSON path: `$.nodes[3].node.inputs[0].arg`
    loc: tuple[str | int, ...]  # the same path as parts: ("nodes", 3, "node", "inputs", 0, "arg")
    message: str


# kind -> (what it means, the pattern of its messages). Checked in order; the first match wins.
ERROR_KINDS: dict[str, tuple[str, str]] = {
    "limit": ("the document exceeds a size or nesting limit",
              r"document of \d+ bytes exceeds the size limit|nesting deeper than \d+ levels"),
    "union": ("a union does not have exactly one non-null member",
              r"expected exactly one member of|member `[^`]*` of `[^`]*` is null"),
    "missing": ("a required field is missing", r"missing required field"),
    "unknown_key": ("a key, union member or field id this schema does not have", r"unknown (key|field|member)"),
    "enum": ("an integer that names no enum member", r"invalid enum value"),
    "int_range": ("an integer outside its field's range", r"integer -?\d+ out of range"),
    "type": ("a value of the wrong JSON (or Thrift) type", r"expected `[^`]+`|field \d+ \(`[^`]*`\) has wire type"),
    "encoding": ("text that is not valid UTF-8, or a lone surrogate", r"invalid UTF-8|surrogate"),
    "truncated": ("binary input that ends early or has bytes left over", r"input truncated|trailing bytes"),
    "syntax": ("text that is not JSON (or not a Thrift document)", r""),
}
_KIND_PATTERNS = [(kind, re.compile(pattern, re.I)) for kind, (_, pattern) in ERROR_KINDS.items() if pattern]
_LOC_PART = re.compile(r'\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|\(key\)')

MAX_LISTED_ERRORS = 20  # how many problems `str(DecodeError)` lists; `errors()` has them all


def kind_of(message: str) -> str:
    """The kind of a decode error message (see ERROR_KINDS); `syntax` when no pattern matches."""
    return next((kind for kind, pattern in _KIND_PATTERNS if pattern.search(message)), "syntax")


def path_parts(path: str) -> tuple[str | int, ...]:
    """`$.nodes[3]["k"].arg` -> ("nodes", 3, "k", "arg")."""
    parts: list[str | int] = []
    for m in _LOC_PART.finditer(path):
        name, index, key = m.groups()
        if name is not None:
            parts.append(name)
        elif index is not None:
            parts.append(int(index))
        elif key is not None:
            parts.append(json.loads(key))
        else:
            parts.append("(key)")
    return tuple(parts)


class DecodeError(ExternSpecError, ValueError):
    """A document does not match the schema.

    `errors()` lists every problem (kind, JSON path, message); `path` is the first one's path
    (`$.nodes[3].node.inputs[0].arg`); `str(e)` shows the first `MAX_LISTED_ERRORS` problems.
    Built from (path, message) pairs, as the decoders produce them (or from `ErrorDetail`s). A
    decoder stops listing after `wire.MAX_DECODE_ERRORS` problems (a hostile document must not
    cost one object per problem); `truncated` says it did.
    """

    def __init__(self, errors: Sequence[tuple[str, str] | ErrorDetail], source: str | None = None,
                 truncated: bool = False):
        self._errors: list[ErrorDetail] = [
            e if isinstance(e, dict)
            else ErrorDetail(kind=kind_of(e[1]), path=e[0], loc=path_parts(e[0]), message=e[1])
            for e in errors
        ]
        self.source = source
        self.truncated = truncated
        self.path = self._errors[0]["path"] if self._errors else "$"
        super().__init__(self._render())

    def errors(self) -> list[ErrorDetail]:
        """Every problem found, in document order: dicts with `kind`, `path`, `loc` and `message`."""
        return [ErrorDetail(**e) for e in self._errors]

    def error_count(self) -> int:
        return len(self._errors)

    def _render(self) -> str:
        prefix = f"{self.source}: " if self.source else ""
        if not self._errors:
            return f"{prefix}invalid document"
        first, rest = self._errors[0], self._errors[1:]
        lines = [f"{prefix}{first['path']}: {first['message']}" + (f" (and {len(rest)} more)" if rest else "")]
        shown = rest[: MAX_LISTED_ERRORS - 1]
        lines += [f"  {e['path']}: {e['message']}" for e in shown]
        if len(rest) > len(shown):
            lines.append(f"  ... {len(rest) - len(shown)} more not shown")
        if self.truncated:
            lines.append(f"  (listing stopped after {len(self._errors)} problems)")
        return "\n".join(lines)


class VersionError(ExternSpecError):
    """A document's schema version cannot be read by this version of externspec."""


class UnionAccessError(ExternSpecError, ValueError):
    """`union.unwrap(member)` of a member that is not the one set (or that the union does not have)."""


class UnsupportedError(ExternSpecError, TypeError):
    """A value or type that the extern-kernel ABI cannot carry (named: op, argument, type)."""


class SpecMismatchError(ExternSpecError, ValueError):
    """A node does not match the op it names, found at load time: unknown op, missing, unknown or
    retyped argument, changed returns (the message names the node, the argument and both types)."""


class CallError(ExternSpecError, ValueError):
    """A call does not match what it must: arguments that do not bind to the op's schema (at
    export), or flat arrays whose lengths or int returns differ from the node's plan (at run)."""


class PackageError(ExternSpecError, ValueError):
    """An AOTInductor package cannot be loaded: not a zip archive, no such model, a member whose
    name escapes the package (absolute, `..`) or whose size is over a limit, a library that is not
    an AOTInductor model. The message names the package and the member."""


class ModelError(ExternSpecError, RuntimeError):
    """A compiled model failed while running, e.g. its own check on the inputs' values
    (`torch._check(n.item() >= 3)`): the message is the model's."""
