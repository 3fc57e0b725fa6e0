"""The version-bump policy as tables: (change set on the real IDL -> required bump and rules), and
(version change, required bump -> verdict). Plus the gate end to end: a deliberately breaking
edit in a test copy of the IDL is caught by `externspec compat`, `--against REV` and
`make check-schema`'s history check, each with the right rule id."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from externspec import cli
from externspec.codegen import compat, ir
from externspec.codegen.compat import Bump
from externspec.codegen.compat.history import check_history
from tests.support.paths import IDL, REPO
from tests.support.versions import CURRENT_IDL, CURRENT_TEXT, MAJOR, MINOR, NEXT_MINOR_IDL, idl_literal

HISTORY = REPO / "schema/history"

DEVICE_DOC = "  /** Device index; null means the current device of that type. */\n"
DEVICE_INDEX = "  20: optional i64 index;\n}"
ADD_OPTIONAL = (DEVICE_INDEX, "  20: optional i64 index;\n  30: optional string label;\n}")
ADD_MEMBER = ("  300: list<list<double>> as_float_lists;\n", "  300: list<list<double>> as_float_lists;\n"
              "  310: list<Device> as_devices;\n")
ADD_ENUM_VALUE = ("  UINT64 = 35,\n", "  UINT64 = 35,\n  FLOAT4E2M1FN_X2 = 36,\n")
DEVICE_TYPE_DOC = "/** A device such as cpu or cuda:1. */"
ADD_TYPE = (DEVICE_TYPE_DOC, "struct Stream {\n  10: i64 id;\n}\n\n" + DEVICE_TYPE_DOC)
RENAME_FIELD = ("  20: optional i64 index;", "  20: optional i64 ordinal;")
CHANGE_ID = ("  10: string type;\n  /** Device index", "  15: string type;\n  /** Device index")

CHANGE_SETS: list[tuple[str, list[tuple[str, str]], Bump, set[str]]] = [
    ("no change", [], Bump.NONE, set()),
    ("doc comment only", [("/** A device such as cpu or cuda:1. */", "/** A device: cpu, cuda:1, ... */")],
     Bump.NONE, set()),
    ("reorder fields (ids and names kept)", [("  10: string type;\n  /** Device index; null means the current "
                                              "device of that type. */\n  20: optional i64 index;",
                                              "  20: optional i64 index;\n  10: string type;")], Bump.NONE, set()),
    ("plain -> required", [("  10: string type;", "  10: required string type;")], Bump.NONE, set()),
    ("typedef with the same structure", [("  70: list<i64> as_ints;", "  70: Ints as_ints;"),
                                         ("struct TokenArgument", "typedef list<i64> Ints\n\nstruct TokenArgument")],
     Bump.NONE, set()),
    ("add optional field", [ADD_OPTIONAL], Bump.MINOR, {"FIELD_ADDED_OPTIONAL"}),
    ("add union member", [ADD_MEMBER], Bump.MINOR, {"UNION_MEMBER_ADDED"}),
    ("add enum value", [ADD_ENUM_VALUE], Bump.MINOR, {"ENUM_VALUE_ADDED"}),
    ("add type", [ADD_TYPE], Bump.MINOR, {"TYPE_ADDED"}),
    ("four additions", [ADD_OPTIONAL, ADD_MEMBER, ADD_ENUM_VALUE, ADD_TYPE], Bump.MINOR,
     {"FIELD_ADDED_OPTIONAL", "UNION_MEMBER_ADDED", "ENUM_VALUE_ADDED", "TYPE_ADDED"}),
    ("delete optional field, reserved",
     [(DEVICE_DOC + DEVICE_INDEX, '} (reserved_ids = "20", reserved_names = "index")')],
     Bump.MINOR, {"FIELD_NO_DELETE_OPTIONAL"}),
    ("delete optional field, not reserved", [("  20: optional i64 index;\n}", "}")], Bump.FORBIDDEN,
     {"FIELD_NO_DELETE_OPTIONAL", "FIELD_NO_DELETE_UNLESS_RESERVED"}),
    ("addition and rename", [ADD_OPTIONAL, RENAME_FIELD], Bump.MAJOR, {"FIELD_ADDED_OPTIONAL", "FIELD_SAME_NAME"}),
    ("rename a type (same shape)", [("struct TokenArgument", "struct EffectToken"),
                                    ("  10: TokenArgument arg;", "  10: EffectToken arg;")],
     Bump.MAJOR, {"TYPE_SAME_NAME"}),
    ("torch export major const", [("TORCH_EXPORT_SCHEMA_MAJOR = 8", "TORCH_EXPORT_SCHEMA_MAJOR = 9")], Bump.MAJOR,
     {"CONST_SAME_VALUE"}),
    ("optional -> plain", [("  20: optional i64 index;", "  20: i64 index;")], Bump.MAJOR,
     {"FIELD_SAME_REQUIREDNESS"}),
    ("rename and change an id", [RENAME_FIELD, CHANGE_ID], Bump.FORBIDDEN, {"FIELD_SAME_NAME", "FIELD_SAME_ID"}),
    ("nested map value type", [("  40: map<string, TensorMeta> tensor_values;",
                                "  40: map<string, TensorArgument> tensor_values;")], Bump.FORBIDDEN,
     {"FIELD_SAME_TYPE"}),
    ("nested list narrowed", [("  280: list<list<i64>> as_int_lists;", "  280: list<list<i32>> as_int_lists;")],
     Bump.FORBIDDEN, {"FIELD_SAME_TYPE"}),
    ("enum renumbered", [("  UINT64 = 35,", "  UINT64 = 36,")], Bump.FORBIDDEN, {"ENUM_VALUE_SAME_NUMBER"}),
]


@functools.cache
def head() -> ir.Schema:
    """The checked-in IDL, parsed once (a parse rebuilds thriftpy2's parser tables: ~0.3 s)."""
    return compat.load(IDL, "schema/externspec.thrift")


def edited(text: str, edits: list[tuple[str, str]]) -> str:
    """Apply (old, new) replacements in order; each replaces every occurrence of `old`."""
    for old, new in edits:
        assert old in text, f"edit target not found: {old!r}"
        text = text.replace(old, new)
    return text


@pytest.mark.parametrize(("name", "edits", "bump", "rules"), CHANGE_SETS, ids=[c[0] for c in CHANGE_SETS])
def test_change_set_requires_bump(tmp_path: Path, name: str, edits: list[tuple[str, str]], bump: Bump,
                                  rules: set[str]) -> None:
    new = compat.load(tmp_path / "new.thrift", "schema/externspec.thrift", text=edited(IDL.read_text(), edits))
    report = compat.compare(head(), new)
    assert report.required == bump, report.text()
    assert {f.rule for f in report.findings} == rules, report.text()


VERDICTS = [
    # old, new, required, at_least -> ok
    ((1, 0), (1, 0), Bump.NONE, False, True),
    ((1, 0), (1, 1), Bump.NONE, False, False),
    ((1, 0), (1, 1), Bump.MINOR, False, True),
    ((1, 0), (1, 0), Bump.MINOR, False, False),
    ((1, 0), (1, 2), Bump.MINOR, False, False),
    ((1, 3), (2, 0), Bump.MAJOR, False, True),
    ((1, 3), (2, 1), Bump.MAJOR, False, False),  # a major bump resets the minor to 0
    ((1, 3), (1, 4), Bump.MAJOR, False, False),
    ((1, 3), (2, 0), Bump.MINOR, False, False),  # more than required is a mismatch against the last release
    ((1, 3), (1, 2), Bump.NONE, False, False),  # backwards
    ((1, 0), (3, 2), Bump.MAJOR, True, True),  # against an older release: at least
    ((1, 0), (1, 5), Bump.MAJOR, True, False),
    ((1, 0), (1, 5), Bump.MINOR, True, True),
    ((1, 0), (1, 0), Bump.NONE, True, True),
    ((1, 0), (2, 0), Bump.FORBIDDEN, False, False),
    ((1, 0), (2, 0), Bump.FORBIDDEN, True, False),
]


@pytest.mark.parametrize(("old", "new", "required", "at_least", "ok"), VERDICTS)
def test_version_verdict(old: tuple[int, int], new: tuple[int, int], required: Bump, at_least: bool,
                         ok: bool) -> None:
    assert compat.judge(old, new, required, at_least=at_least).ok is ok


def test_expected_versions() -> None:
    assert compat.expected_version((1, 4), Bump.NONE) == (1, 4)
    assert compat.expected_version((1, 4), Bump.MINOR) == (1, 5)
    assert compat.expected_version((1, 4), Bump.MAJOR) == (2, 0)
    assert compat.expected_version((1, 4), Bump.FORBIDDEN) is None


# ---- the gate, end to end, on a test copy of the IDL -------------------------------------------

BREAKING = ("  20: optional i64 index;", "  20: optional string index;")


def _breaking_copy(tmp_path: Path) -> Path:
    new = tmp_path / "externspec.thrift"
    new.write_text(edited(IDL.read_text(), [BREAKING]), encoding="utf-8")
    return new


def _index_line() -> int:
    return IDL.read_text().splitlines().index(BREAKING[0]) + 1


def test_cli_catches_a_breaking_edit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = _breaking_copy(tmp_path)
    assert cli.main(["compat", str(IDL), str(new)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (f'{new}:{_index_line()}:3: [FIELD_SAME_TYPE] field 20 ("index") on struct "Device" '
                      "changed type from i64 to string (incompatible)")
    assert out[1] == (f"required bump: forbidden; SCHEMA_VERSION {CURRENT_TEXT} -> {CURRENT_TEXT}: the changes are "
                      "forbidden under any version bump")
    assert out[2] == "FAILED. Options:"
    assert out[3].startswith("  1. revert the forbidden changes")
    assert out[4].startswith("  2. [FIELD_SAME_TYPE] add a new field with a new id and name")


def test_cli_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = _breaking_copy(tmp_path)
    assert cli.main(["compat", "--json", str(IDL), str(new)]) == 1
    (doc,) = json.loads(capsys.readouterr().out)  # one result per checked file (NEW), as validate's
    assert doc["ok"] is False and doc["required_bump"] == "forbidden" and doc["file"] == str(new)
    assert [e["kind"] for e in doc["errors"]] == ["FIELD_SAME_TYPE", "version_bump"]
    assert [(f["rule"], f["line"], f["col"]) for f in doc["findings"]] == [("FIELD_SAME_TYPE", _index_line(), 3)]
    assert doc["findings"][0]["categories"] == ["wire-JSON", "wire-binary", "source"]


def test_cli_minor_change_without_bump_then_with(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = tmp_path / "externspec.thrift"
    new.write_text(edited(IDL.read_text(), [ADD_OPTIONAL]), encoding="utf-8")
    assert cli.main(["compat", str(IDL), str(new)]) == 1
    out = capsys.readouterr().out
    assert "[FIELD_ADDED_OPTIONAL]" in out and f"set SCHEMA_VERSION to {NEXT_MINOR_IDL}" in out
    new.write_text(edited(new.read_text(), [(CURRENT_IDL, NEXT_MINOR_IDL)]))
    assert cli.main(["compat", str(IDL), str(new)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "OK"


def _vendored_idl(repo: Path, name: str, text: str | None = None) -> Path:
    """A git repository at `repo` whose one commit holds `text` (default: the current IDL) at `name`."""
    idl = repo / name
    idl.parent.mkdir(parents=True)
    idl.write_text(IDL.read_text() if text is None else text, encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "vendor"], check=True)
    return idl


def test_cli_against_a_git_revision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A project that vendors the IDL runs the check against its last commit."""
    idl = _vendored_idl(tmp_path / "vendor", "idl/externspec.thrift")
    idl.write_text(edited(IDL.read_text(), [BREAKING]), encoding="utf-8")
    assert cli.main(["compat", "--against", "HEAD", str(idl)]) == 1
    assert f"{idl}:{_index_line()}:3: [FIELD_SAME_TYPE]" in capsys.readouterr().out
    assert cli.main(["compat", "--against", "nosuchrev", str(idl)]) == 1
    assert "cannot read idl/externspec.thrift at revision 'nosuchrev'" in capsys.readouterr().err


@pytest.mark.parametrize("rev", ["--output={out}", "-p", "--output={out}:x"])
def test_cli_against_refuses_option_like_revisions(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   rev: str) -> None:
    """git must never read `--against` as an option: `--output=FILE` wrote FILE (then the empty text it
    printed ended in an internal error)."""
    idl = _vendored_idl(tmp_path / "vendor", "externspec.thrift")
    out = tmp_path / "written"
    assert cli.main(["compat", f"--against={rev.format(out=out)}", str(idl)]) == 1
    err = capsys.readouterr().err
    assert f"--against {rev.format(out=out)!r} is not a git revision" in err, err
    assert not list(tmp_path.glob("written*"))


def test_cli_against_a_revision_with_an_empty_idl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    idl = _vendored_idl(tmp_path / "vendor", "externspec.thrift", text="")
    shutil.copy(IDL, idl)
    assert cli.main(["compat", "--against", "HEAD", str(idl)]) == 1
    err = capsys.readouterr().err
    assert "HEAD:externspec.thrift:1:1: the IDL declares nothing (an empty file?)" in err, err
    assert "internal error" not in err


def test_cli_usage_and_bad_idl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["compat", str(IDL)]) == 2
    assert "expected OLD.thrift NEW.thrift" in capsys.readouterr().err
    bad = tmp_path / "bad.thrift"
    bad.write_text(IDL.read_text().replace("struct Device {", 'struct Device {\n  20: optional i64 index2;', 1))
    assert cli.main(["compat", str(IDL), str(bad)]) == 1
    assert "bad.thrift" in capsys.readouterr().err


def test_repository_schema_passes_the_history_check() -> None:
    """`make check-schema` on this checkout (also run by `make test`)."""
    result = check_history(IDL, HISTORY)
    assert result.ok, "\n".join(result.lines)


def test_history_check_catches_a_breaking_edit(tmp_path: Path) -> None:
    history = tmp_path / "history"
    shutil.copytree(HISTORY, history)
    new = _breaking_copy(tmp_path)
    result = check_history(new, history)
    assert not result.ok
    last_release = result.reports[0]  # HEAD against the last release: exactly the edit
    assert {f.rule for f in last_release.findings} == {"FIELD_SAME_TYPE"}


def _release_file(history: Path, minor: int) -> Path:
    return history / f"v{MAJOR}.{minor}.thrift"


def test_history_check_on_several_releases(tmp_path: Path) -> None:
    """HEAD must be exactly the next version of the last release and at least as big for older ones."""
    history = tmp_path / "history"
    history.mkdir()
    shutil.copy(IDL, _release_file(history, MINOR))  # this checkout's IDL is its last release
    nxt = edited(IDL.read_text(), [ADD_OPTIONAL, (CURRENT_IDL, NEXT_MINOR_IDL)])
    _release_file(history, MINOR + 1).write_text(nxt, encoding="utf-8")
    head = tmp_path / "externspec.thrift"
    head.write_text(edited(nxt, [ADD_ENUM_VALUE, (NEXT_MINOR_IDL, idl_literal(MAJOR, MINOR + 2))]))
    assert check_history(head, history).ok
    head.write_text(edited(nxt, [ADD_ENUM_VALUE]))  # forgot the bump
    result = check_history(head, history)
    # HEAD vs the last release (exact) fails, HEAD vs the one before (at least) passes, and so
    # does the step between the two releases.
    assert not result.ok and [r.ok for r in result.reports] == [False, True, True]
    _release_file(history, MINOR + 3).write_text(nxt, encoding="utf-8")  # misnamed release
    assert any(f"its name says ({MAJOR}, {MINOR + 3})" in line for line in check_history(head, history).lines)


def test_history_check_catches_an_edited_release(tmp_path: Path) -> None:
    """A frozen file edited after the fact breaks the chain of releases."""
    history = tmp_path / "history"
    history.mkdir()
    nxt = _release_file(history, MINOR + 1)
    nxt.write_text(edited(IDL.read_text(), [ADD_OPTIONAL, (CURRENT_IDL, NEXT_MINOR_IDL)]), encoding="utf-8")
    _release_file(history, MINOR).write_text(edited(IDL.read_text(), [ADD_MEMBER]), encoding="utf-8")  # tampered
    result = check_history(nxt, history)
    assert not result.ok
    assert any(line.startswith(f"== release {nxt} against the release before it")
               for line in result.lines)
    assert "UNION_MEMBER_NO_DELETE" in {f.rule for r in result.reports for f in r.findings}
