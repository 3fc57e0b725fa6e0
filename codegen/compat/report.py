"""Run every rule over two schemas and present the result: findings, required bump, verdict,
numbered remediation options; as text (one `file:line:col: [RULE_ID] message` per finding) or as
data for JSON (`to_json`, in `externspec compat --format json`'s result)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import ir
from . import rules_consts, rules_enums, rules_fields, rules_types  # noqa: F401  (registers the rules)
from .model import Bump, Finding
from .registry import RULES
from .verdict import Verdict, expected_version, fmt, judge


@dataclass(frozen=True)
class Report:
    old: ir.Schema
    new: ir.Schema
    findings: tuple[Finding, ...]
    verdict: Verdict

    @property
    def required(self) -> Bump:
        return self.verdict.required

    @property
    def ok(self) -> bool:
        return self.verdict.ok

    def remediation(self) -> list[str]:
        """Numbered options for a failed check: version edits first, then the rules' remedies."""
        if self.ok:
            return []
        v = self.verdict
        options = []
        const = self.new.const("SCHEMA_VERSION")
        where = f" at {const.loc}" if const else ""
        if v.required == Bump.FORBIDDEN:
            option = "revert the forbidden changes (rules with bump `forbidden` above)"
            rest = max((f.bump for f in self.findings if f.bump < Bump.FORBIDDEN), default=Bump.NONE)
            then = expected_version(v.old, rest) if v.old is not None else None
            if then is not None and then != v.new:
                option += f"; the other changes then need SCHEMA_VERSION {fmt(then)} ({rest} bump)"
            options.append(option)
        elif v.expected is not None:
            e = v.expected
            if v.new is not None and v.new > e and v.new[0] == e[0] and v.required != Bump.MAJOR:
                # NEW is past the version these changes need: OLD is an older release, not the last one.
                options.append(f"if OLD ({fmt(v.old) if v.old else '?'}) is an older release, not the last one "
                               f"before {fmt(v.new)}: accept any version at least as big as required with "
                               "`externspec compat --at-least`, or compare NEW with the last release")
            step = f'set SCHEMA_VERSION to {{"major": {e[0]}, "minor": {e[1]}}}{where}'
            if v.required == Bump.MAJOR:
                step += (" and register an upgrader from major "
                         f"{v.old[0] if v.old else '?'} in python/externspec/wire/upgrade.py")
            options.append(step)
        elif v.old is None or v.new is None:
            options.append('declare const SchemaVersion SCHEMA_VERSION = {"major": M, "minor": N} in both files')
        for rule_id in sorted({f.rule for f in self.findings if f.bump >= max(v.required, Bump.MAJOR)}):
            remedy = RULES[rule_id].remedy
            if remedy:
                options.append(f"[{rule_id}] {remedy}")
        if v.required != Bump.FORBIDDEN and self.findings:
            options.append("revert the changes listed above")
        return options

    def text(self) -> str:
        lines = [str(f) for f in self.findings]
        if not self.findings:
            lines.append(f"{self.new.path}: no changes that affect compatibility")
        lines.append(f"required bump: {self.required}; {self.verdict.message}")
        if self.ok:
            lines.append("OK")
        else:
            lines.append("FAILED. Options:")
            lines += [f"  {i}. {opt}" for i, opt in enumerate(self.remediation(), 1)]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        v = self.verdict
        return {
            "old": {"path": self.old.path, "version": fmt(v.old) if v.old else None},
            "new": {"path": self.new.path, "version": fmt(v.new) if v.new else None},
            "required_bump": str(self.required),
            "expected_version": fmt(v.expected) if v.expected else None,
            "ok": self.ok,
            "message": v.message,
            "findings": [
                {"rule": f.rule, "bump": str(f.bump), "categories": [str(c) for c in RULES[f.rule].categories],
                 "file": f.loc.file, "line": f.loc.line, "col": f.loc.col, "message": f.message}
                for f in self.findings
            ],
            "remediation": self.remediation(),
        }


def find_changes(old: ir.Schema, new: ir.Schema) -> tuple[Finding, ...]:
    """Every finding of every rule, sorted by location."""
    found = [f for r in RULES.values() for f in r.run(old, new)]
    return tuple(sorted(found, key=Finding.sort_key))


def required_bump(findings: tuple[Finding, ...] | list[Finding]) -> Bump:
    return max((f.bump for f in findings), default=Bump.NONE)


def compare(old: ir.Schema, new: ir.Schema, *, at_least: bool = False,
            old_version: tuple[int, int] | None = None, new_version: tuple[int, int] | None = None) -> Report:
    """Classify every change from `old` to `new` and judge the SCHEMA_VERSION change.

    `old_version`/`new_version` override the declared versions (for IDLs, like torch's, that keep
    their version elsewhere).
    """
    findings = find_changes(old, new)
    verdict = judge(old_version or old.schema_version(), new_version or new.schema_version(),
                    required_bump(findings), at_least=at_least)
    return Report(old, new, findings, verdict)
