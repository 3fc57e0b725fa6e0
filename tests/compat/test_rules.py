"""One fixture pair per compatibility rule (tests/compat/rules/<RULE_ID>/old.thrift, new.thrift)
and the exact findings expected (expected.txt: every finding line, then the required bump).

Refresh the expected files after an intended message change with
`.venv/bin/python -m pytest tests/compat/test_rules.py --update-golden`, then review the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from externspec.codegen import compat
from tests.support.golden import Golden

RULES_DIR = Path(__file__).parent / "rules"
CASES = sorted(p.name for p in RULES_DIR.iterdir() if p.is_dir())


def _run(case: str) -> tuple[compat.Report, str]:
    d = RULES_DIR / case
    old = compat.load(d / "old.thrift", "old.thrift", require_version=False)
    new = compat.load(d / "new.thrift", "new.thrift", require_version=False)
    report = compat.compare(old, new)
    text = "\n".join([*(str(f) for f in report.findings), f"required: {report.required}"]) + "\n"
    return report, text


def test_every_rule_has_a_fixture() -> None:
    assert sorted(compat.RULES) == CASES


@pytest.mark.parametrize("case", CASES)
def test_rule_fixture(case: str, golden: Golden) -> None:
    report, text = _run(case)
    golden.check(RULES_DIR / case / "expected.txt", text)
    # The fixture exercises its own rule, and the required bump is that of the worst finding.
    assert case in {f.rule for f in report.findings}
    assert report.required == max(f.bump for f in report.findings)
    assert compat.RULES[case].bump <= report.required


def test_rules_are_documented() -> None:
    for r in compat.RULES.values():
        assert r.purpose and "\n" not in r.purpose, r.id
        assert r.categories, r.id
        if r.bump >= compat.Bump.MAJOR:
            assert r.remedy, f"{r.id} needs a remedy: it fails the check"
