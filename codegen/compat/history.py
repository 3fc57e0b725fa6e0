"""`make check-schema`: the IDL at HEAD against every frozen release in schema/history/.

Releasing version X.Y means copying the IDL to schema/history/vX.Y.thrift. The check then demands:
* every history file declares the version its name says;
* HEAD against the newest release: exactly the bump its changes require (none, next minor,
  next major .0);
* HEAD against every older release: no forbidden change and at least the required bump (several
  releases may lie in between);
* every release against the one before it: exactly the bump it required (a frozen file edited
  after the fact shows up here).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path

from .. import ir
from ..errors import SchemaError
from . import load
from .report import Report, compare

_NAME = re.compile(r"^v(\d+)\.(\d+)\.thrift$")


@dataclass(frozen=True)
class HistoryResult:
    ok: bool
    lines: tuple[str, ...]
    reports: tuple[Report, ...]


def releases(history: Path) -> list[tuple[tuple[int, int], Path]]:
    """(version, path) of every vX.Y.thrift, oldest first; other files are an error."""
    out = []
    for p in sorted(history.iterdir()):
        m = _NAME.match(p.name)
        if m is None:
            raise SchemaError([(ir.SourceLoc(str(p), 1), "history files must be named vMAJOR.MINOR.thrift")])
        out.append(((int(m.group(1)), int(m.group(2))), p))
    return sorted(out)


def check_history(idl: Path, history: Path) -> HistoryResult:
    head = load(idl, str(idl))
    found = releases(history)
    if not found:
        return HistoryResult(False, (f"{history}: no released versions (freeze one: cp {idl} {history}/v1.0.thrift)",),
                             ())
    frozen = [(version, path, load(path, str(path))) for version, path in found]
    lines: list[str] = []
    reports: list[Report] = []
    for version, path, old in frozen:
        if old.schema_version() != version:
            lines.append(f"{path}: declares SCHEMA_VERSION {old.schema_version()}, but its name says {version}")
    for i, (_, path, old) in enumerate(reversed(frozen)):
        newest = i == 0
        report = compare(old, head, at_least=not newest)
        reports.append(report)
        lines.append(f"== {idl} against {path} ({'the last release: exact bump' if newest else 'older release'})")
        lines.append(report.text())
    for (_, before, a), (_, after, b) in itertools.pairwise(frozen):
        report = compare(a, b)
        reports.append(report)
        if not report.ok:
            lines.append(f"== release {after} against the release before it, {before}")
            lines.append(report.text())
    ok = all(r.ok for r in reports) and not any("but its name says" in line for line in lines)
    lines.append("schema check: " + ("OK" if ok else "FAILED"))
    return HistoryResult(ok, tuple(lines), tuple(reports))
