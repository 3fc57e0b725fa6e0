"""The errors externspec raises for bad input, all under `ExternSpecError`.

Errors are data, made where a problem is found: a `DecodeError` carries one `ErrorDetail` record
per problem (its *kind*, JSON path, message, and the key it names), built by the decoder that found
it (pydantic's error type, the Thrift readers' sites, the C++ decoder's `IssueKind`, carried across
the binding as records). The kinds are the keys of `ERROR_KINDS`; the C++ decoder names the same
kinds (`externspec::error_kind_name`): both read one table, include/externspec/wire/error_kinds.def. No
code reads an error's kind, path or key back out of its message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TypedDict

from ._def_file import DEF_DIR, entries


class ExternSpecError(Exception):
    """Base of every error externspec raises for bad input (a spec, a file, call arrays).

    `node` is the index of the spec node the error is about, when there is one (given by the
    executor that planned that node); the command line points at `$.nodes[node]` from it."""

    def __init__(self, *args: object, node: int | None = None):
        super().__init__(*args)
        self.node = node


class ErrorDetail(TypedDict):
    """One problem of a document, as `DecodeError.errors()` lists it (like pydantic's `errors()`)."""

    kind: str  # a key of ERROR_KINDS
    path: str  # JSON path: `$.nodes[3].node.inputs[0].arg`
    loc: tuple[str | int, ...]  # the same path as parts: ("nodes", 3, "node", "inputs", 0, "arg")
    message: str
    key: str | None  # the key an `unknown_key` or `missing` problem names, else None


# kind -> what it means. Every decoder labels its problems with one of these where it finds them; the
# C++ decoder's `IssueKind` is read from the same table (include/externspec/wire/error_kinds.def).
ERROR_KINDS_FILE = DEF_DIR / "wire" / "error_kinds.def"
ERROR_KINDS: dict[str, str] = {fields[1]: fields[2] for _, macro, fields in entries(ERROR_KINDS_FILE)
                               if macro == "ES_ERROR_KIND"}
_LOC_PART = re.compile(r'\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|\(key\)')

MAX_LISTED_ERRORS = 20  # how many problems `str(DecodeError)` lists; `errors()` has them all


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


def problem(kind: str, path: str, message: str, key: str | None = None) -> ErrorDetail:
    """One problem's record, made where it is found (`kind` a key of ERROR_KINDS)."""
    if kind not in ERROR_KINDS:
        raise ValueError(f"unknown error kind {kind!r} (one of {', '.join(ERROR_KINDS)})")
    return ErrorDetail(kind=kind, path=path, loc=path_parts(path), message=message, key=key)


class DecodeError(ExternSpecError, ValueError):
    """A document does not match the schema.

    `errors()` lists every problem (kind, JSON path, message); `path` is the first one's path
    (`$.nodes[3].node.inputs[0].arg`); `str(e)` shows the first `MAX_LISTED_ERRORS` problems.
    Built from the records the decoders make (`problem(kind, path, message)`). A decoder stops
    listing after `wire.MAX_DECODE_ERRORS` problems (a hostile document must not cost one object
    per problem); `truncated` says it did.
    """

    def __init__(self, errors: Sequence[ErrorDetail], source: str | None = None, truncated: bool = False):
        self._errors: list[ErrorDetail] = list(errors)
        self.source = source
        self.truncated = truncated
        self.path = self._errors[0]["path"] if self._errors else "$"
        super().__init__(self._render())

    def errors(self) -> list[ErrorDetail]:
        """Every problem found, in document order: dicts with `kind`, `path`, `loc`, `message`, `key`."""
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
    """A document's schema version cannot be read by this version of externspec.

    `path` is the JSON path of what decided it (`$.schema_version`, or an unknown key's object),
    `key` the unknown key when a newer minor's key decided it, `message` the sentence without the
    source and path; `str(e)` is `source: path: message`."""

    def __init__(self, message: str, *, path: str = "$", key: str | None = None, source: str | None = None):
        self.message = message
        self.path = path
        self.key = key
        self.source = source
        super().__init__(f"{source + ': ' if source else ''}{path}: {message}")

    def with_source(self, source: str | None) -> VersionError:
        """The same error, naming `source` (a file path)."""
        return VersionError(self.message, path=self.path, key=self.key, source=source) if source else self


class UnionAccessError(ExternSpecError, ValueError):
    """`union.unwrap(member)` of a member that is not the one set (or that the union does not have)."""


class UnsupportedError(ExternSpecError, TypeError):
    """A value or type that the extern-kernel ABI cannot carry (named: op, argument, type)."""


class SpecMismatchError(ExternSpecError, ValueError):
    """A node does not match the op it names, found at load time: unknown op, missing, unknown or
    retyped argument, changed returns (the message names the node, the argument and both types)."""

    # The op namespace no loaded library registers, where that is why (data for the surface's
    # advice: `--load` on the command line, `op_libraries` in Python).
    missing_namespace: str | None = None


class CallError(ExternSpecError, ValueError):
    """A call does not match what it must: arguments that do not bind to the op's schema (at
    export), or flat arrays whose lengths or int returns differ from the node's plan (at run)."""


class PackageError(ExternSpecError, ValueError):
    """An AOTInductor package cannot be loaded: not a zip archive, no such model, a member whose
    name escapes the package (absolute, `..`) or whose size is over a limit, a library that is not
    an AOTInductor model. The message names the package and the member.

    Where the package and member are known apart from the sentence, `source` names them
    (`pkg.pt2!member`) and `message` is the sentence alone; `str(e)` is `source: message`. `kind`,
    for a file that is not an AOTInductor package, says what it is (a key of
    `externspec.file_kind.KINDS`: `exported_program`, `torchscript`, `not_zip`, ...), as data."""

    def __init__(self, message: str, *, source: str | None = None, kind: str | None = None):
        self.message = message
        self.source = source
        self.kind = kind
        super().__init__(f"{source}: {message}" if source else message)


class ModelError(ExternSpecError, RuntimeError):
    """A compiled model failed while running, e.g. its own check on the inputs' values
    (`torch._check(n.item() >= 3)`): the message is the model's."""
