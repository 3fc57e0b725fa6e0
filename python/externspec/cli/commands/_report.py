"""Findings in the form their reader wants: `--format text|json|github` (docs/cli.md).

The commands that report findings (`validate`, `inspect`, `check-spec`, `compat`) collect one
`FileResult` per FILE argument, each with the `Problem`s found in it, and hand them to a `Reporter`:

* `text` (the default): the command prints its own human-readable lines; the reporter prints
  nothing.
* `json`: one JSON document on stdout once every file is done, always a list with one object per
  FILE, in order: `{"file", "ok", "errors": [{"kind", "path", "message", ...}], ...}` plus the
  command's own fields. Numbers are JSON numbers. `--json` is the same as `--format json`.
* `github`: GitHub Actions workflow commands, one `::error file=F,title=externspec::PATH: MESSAGE`
  line per problem, printed as each file is done (escaped by GitHub's rules: `%`, CR and LF in
  the message; those and `:` and `,` in property values).

Exit codes do not depend on the format.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from typing import Any

OUTPUT_FORMATS = ("text", "json", "github")
_INPUT_FORMATS = ("binary", "compact")  # what `--format` chose before it chose the report format


def _output_format(value: str) -> str:
    if value in OUTPUT_FORMATS:
        return value
    if value in _INPUT_FORMATS:
        raise argparse.ArgumentTypeError(
            f"{value!r} is an input format: --format chooses the report format ({', '.join(OUTPUT_FORMATS)}); "
            f"the input format is --from {value}")
    raise argparse.ArgumentTypeError(f"invalid choice: {value!r} (choose from {', '.join(OUTPUT_FORMATS)})")


def add_format_arguments(p: argparse.ArgumentParser) -> None:
    """`--format text|json|github` and its alias `--json`."""
    p.add_argument("--format", dest="output_format", type=_output_format, default="text",
                   metavar="{text,json,github}",
                   help="report format: text for people (default), json (one document on stdout), "
                        "github (GitHub Actions ::error commands)")
    p.add_argument("--json", dest="output_format", action="store_const", const="json",
                   help="the same as --format json")


@dataclass(frozen=True)
class Problem:
    """One finding: what kind, where (a JSON path, or `$` for the whole document) and what.

    `source` names the archive member when the problem is inside one (`a.pt2:models/model.json`);
    `file`/`line`/`col` locate it in a text file (compat's IDL findings; `file` when it is not the
    FILE argument itself, e.g. a finding in OLD)."""

    kind: str
    path: str
    message: str
    source: str | None = None
    file: str | None = None
    line: int | None = None
    col: int | None = None

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "path": self.path, "message": self.message}
        if self.source is not None:
            d["source"] = self.source
        if self.file is not None:
            d["file"] = self.file
        if self.line is not None:
            d["line"] = self.line
            d["col"] = self.col
        return d


@dataclass
class FileResult:
    """What a command found in one FILE argument; `fields` are the command's own JSON keys."""

    file: str
    errors: list[Problem] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "ok": self.ok, "errors": [p.as_dict() for p in self.errors], **self.fields}


def problems_of(exc: BaseException, *, label: str, file: str) -> list[Problem]:
    """Every problem an error names, from its records: each of a DecodeError's; else one, at the
    error's JSON path (a VersionError's or InputError's), or at the node it is about (an executor's
    errors carry `node`), else at `$`."""
    from externspec import errors

    from ._documents import InputError

    source = label if label != file else None
    if isinstance(exc, errors.DecodeError):
        return [Problem(d["kind"], d["path"], d["message"], source=source) for d in exc.errors()]
    if isinstance(exc, (errors.VersionError, InputError)):
        kind = "version" if isinstance(exc, errors.VersionError) else exc.kind
        return [Problem(kind, exc.path, exc.message, source=source)]
    if isinstance(exc, errors.SpecMismatchError):
        kind = "spec_mismatch"
    elif isinstance(exc, errors.UnsupportedError):
        kind = "unsupported"
    elif isinstance(exc, errors.ExternSpecError):
        kind = "spec"
    else:
        kind = "input"
    node = getattr(exc, "node", None)
    return [Problem(kind, "$" if node is None else f"$.nodes[{node}]", str(exc), source=source)]


def escape_data(text: str) -> str:
    """A workflow command's message: `%`, CR and LF escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: as a message, and `:` and `,` too."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_line(file: str, problem: Problem, *, level: str = "error") -> str:
    props = [f"file={escape_property(problem.file or file)}"]
    if problem.line is not None:
        props.append(f"line={problem.line}")
        if problem.col is not None:
            props.append(f"col={problem.col}")
    props.append("title=externspec")
    where = f"{problem.source.removeprefix(f'{file}:')}: " if problem.source else ""
    message = problem.message if problem.path == "" else f"{problem.path}: {problem.message}"
    return f"::{level} {','.join(props)}::{escape_data(where + message)}"


def _write_json(doc: Any) -> None:
    """`doc` as indented JSON on stdout, written in 64 KiB pieces as it is encoded: the document is
    never held as one string (inspect's is ~3.5 times its input; issue 36, item 13)."""
    pieces: list[str] = []
    size = 0
    for piece in json.JSONEncoder(indent=2).iterencode(doc):
        pieces.append(piece)
        size += len(piece)
        if size >= 1 << 16:
            sys.stdout.write("".join(pieces))
            pieces.clear()
            size = 0
    sys.stdout.write("".join(pieces) + "\n")
    sys.stdout.flush()


class Reporter:
    """Prints FileResults in the chosen format (text: the command prints them itself)."""

    def __init__(self, output_format: str):
        self.format = output_format
        self.results: list[FileResult] = []

    @property
    def text(self) -> bool:
        return self.format == "text"

    def add(self, result: FileResult, *, notices: list[Problem] | None = None) -> None:
        """Record one file's result; `notices` are findings that are not errors (github: ::notice)."""
        self.results.append(result)
        if self.format == "github":
            lines = [github_line(result.file, p) for p in result.errors]
            lines += [github_line(result.file, p, level="notice") for p in notices or []]
            if lines:
                print("\n".join(lines), flush=True)

    def fail_all(self, files: list[str], kind: str, message: str) -> int:
        """The command could not look at any FILE (torch missing, ops that did not load): every
        FILE fails with the one problem, so json and github output still have one result per FILE."""
        for f in files:
            self.add(FileResult(f, errors=[Problem(kind, "$", message)]))
        return self.finish()

    def finish(self) -> int:
        """Print what is left (the JSON document) and return the exit code: 1 if any file is bad."""
        if self.format == "json":
            _write_json([r.as_dict() for r in self.results])
        return 0 if all(r.ok for r in self.results) else 1
