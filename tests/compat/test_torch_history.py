"""The checker on torch's own history: export_schema.thrift of torch's schema 8.11 (a pytorch
commit, tests/compat/torch/) against the one in the installed torch 2.13 wheel (schema 8.20).

torch bumped the minor only (8.11 -> 8.20). Between them ExportedProgram lost `tensor_paths` (id
90) and `constant_paths` (id 100), and `guards_code` moved from id 110 to id 90, reusing a deleted
field's id. torch's own policy (schema_check.py) makes removing a field a major change; ids are
identity here, so the checker calls the id reuse forbidden. torch's bump was not sufficient.
Caveat: torch's thrift file drops defaults (they live in schema.py), so the deleted fields look
required here; with their defaults the deletions alone would be minor, once reserved.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from externspec import cli
from externspec.codegen import compat

OLD = Path(__file__).parent / "torch/export_schema_v8.11.thrift"


def _installed_torch_schema() -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        pytest.skip("torch is not installed")
    return Path(spec.origin).parent / "_export/serde/export_schema.thrift"


def test_torch_8_11_to_8_20(capsys: pytest.CaptureFixture[str]) -> None:
    new = _installed_torch_schema()
    old_ir = compat.load(OLD, "torch-8.11/export_schema.thrift", require_version=False)
    new_ir = compat.load(new, "torch-2.13/export_schema.thrift", require_version=False)
    report = compat.compare(old_ir, new_ir, old_version=(8, 11), new_version=(8, 20))
    by_rule: dict[str, list[str]] = {}
    for f in report.findings:
        by_rule.setdefault(f.rule, []).append(f.message)
    assert sorted(by_rule) == [
        "ENUM_VALUE_ADDED", "FIELD_ADDED_OPTIONAL", "FIELD_NO_DELETE", "FIELD_NO_DELETE_UNLESS_RESERVED",
        "FIELD_SAME_ID", "FIELD_SAME_NAME", "FIELD_SAME_TYPE", "TYPE_ADDED", "TYPE_NO_DELETE", "UNION_MEMBER_ADDED",
    ]
    assert by_rule["FIELD_SAME_ID"] == [
        'field 90 ("guards_code") on struct "ExportedProgram" changed id from 110 to 90']
    assert len(by_rule["UNION_MEMBER_ADDED"]) == 5 and len(by_rule["ENUM_VALUE_ADDED"]) == 3
    assert report.required == compat.Bump.FORBIDDEN and not report.ok

    # The same through the command line, as a CI job would run it.
    argv = ["compat", "--no-version-const", "--old-version", "8.11", "--new-version", "8.20", str(OLD), str(new)]
    assert cli.main(argv) == 1
    out = capsys.readouterr().out
    assert out.count("\n") == len(report.findings) + 2 + len(report.remediation())
    assert "required bump: forbidden; SCHEMA_VERSION 8.11 -> 8.20" in out
