"""Golden tests: each small IDL under cases/<feature>/ against every emitter's expected output.

Refresh the expected files with `pytest tests/codegen --update-golden`, then review the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from externspec.codegen import lint, parse_text
from externspec.codegen.generate import default_targets
from tests.support.golden import Golden

CASES = Path(__file__).parent / "cases"
EMITTERS = {t.name: t.emit for t in default_targets(Path("."))}


def case_outputs(case: Path) -> dict[Path, str]:
    text = (case / "schema.thrift").read_text()
    schema = parse_text(text, f"cases/{case.name}/schema.thrift")
    lint(schema, text, require_version=False)
    return {
        case / "expected" / emitter / name: output
        for emitter, emit in EMITTERS.items()
        for name, output in emit(schema).items()
    }


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir()))
def test_golden(case: str, golden: Golden) -> None:
    for path, text in case_outputs(CASES / case).items():
        golden.check(path, text)


def test_output_is_deterministic() -> None:
    for case in CASES.iterdir():
        assert case_outputs(case) == case_outputs(case)
