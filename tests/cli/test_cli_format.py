"""`--format text|json|github` on the commands that report findings, through real subprocesses.

JSON is one document on stdout, a list with one result per FILE whatever their number, numbers as
JSON numbers; github is one workflow command per problem, escaped as GitHub Actions requires. The
exit codes are those of the text format.
"""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

import externspec as es
from externspec import thrift
from externspec.cli.commands import _report
from tests.support.cli import externspec
from tests.support.paths import IDL
from tests.support.versions import CURRENT_IDL, NEXT_MINOR_IDL

NODE = {"target": "aten::add.Tensor",
        "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}, "kind": 1},
                   {"name": "other", "arg": {"as_tensor": {"name": "y"}}, "kind": 1},
                   {"name": "alpha", "arg": {"as_float": 2.5}, "kind": 2}],
        "outputs": [{"as_tensor": {"name": "buf0"}}], "metadata": {}}
GOOD = {"nodes": [{"name": "buf0", "node": NODE}]}
BAD = {"nodes": [{"name": 1, "node": {"target": "t"}}]}  # 1 type error, 3 missing fields


def no_traceback(r: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert "Traceback" not in r.stderr, r.stderr
    return r


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name, doc in (("good.json", GOOD), ("bad.json", BAD)):
        out[name] = tmp_path / name
        out[name].write_text(json.dumps(doc))
    out["missing.json"] = tmp_path / "missing.json"
    return out


def results(r: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """stdout as the one JSON document it must be: a list of per-file results."""
    doc = json.loads(r.stdout)
    assert isinstance(doc, list)
    for result in doc:
        assert {"file", "ok", "errors"} <= set(result) and result["ok"] is (result["errors"] == [])
        for error in result["errors"]:
            assert {"kind", "path", "message"} <= set(error)
    return doc


def test_validate_json_has_one_shape_for_one_file_and_many(files: dict[str, Path]) -> None:
    one = no_traceback(externspec("validate", "--format", "json", str(files["good.json"])))
    assert one.returncode == 0 and one.stderr == ""
    (good,) = results(one)
    assert good["file"] == str(files["good.json"]) and good["ok"] is True
    (document,) = good["documents"]
    assert (document["type"], document["schema_version"], document["nodes"]) == ("ExternKernelNodes", None, 1)

    many = no_traceback(externspec("validate", "--format", "json", *map(str, files.values())))
    assert many.returncode == 1  # as in text: any bad file
    good_again, bad, missing = results(many)
    assert good_again == good
    assert bad["ok"] is False
    assert [(e["kind"], e["path"]) for e in bad["errors"]] == [
        ("type", "$.nodes[0].name"), *[("missing", "$.nodes[0].node")] * 3]
    assert bad["errors"][0]["message"] == "expected `str`, got `int`"
    assert missing["errors"] == [{"kind": "input", "path": "$", "message": "cannot read: No such file or directory"}]
    # --json is the same as --format json.
    assert externspec("validate", "--json", *map(str, files.values())).stdout == many.stdout


def test_validate_github_one_command_per_problem(files: dict[str, Path]) -> None:
    r = no_traceback(externspec("validate", "--format", "github", *map(str, files.values())))
    assert r.returncode == 1
    bad, missing = str(files["bad.json"]), str(files["missing.json"])
    assert r.stdout.splitlines() == [
        f"::error file={bad},title=externspec::$.nodes[0].name: expected `str`, got `int`",
        *[f"::error file={bad},title=externspec::$.nodes[0].node: missing required field `{f}`"
          for f in ("inputs", "outputs", "metadata")],
        f"::error file={missing},title=externspec::$: cannot read: No such file or directory",
    ]
    ok = externspec("validate", "--format", "github", str(files["good.json"]))
    assert ok.returncode == 0 and ok.stdout == ""


def test_github_escapes_messages_and_properties(tmp_path: Path) -> None:
    """A file name with `,` and `:`, an unknown key with a newline, `%`, `,` and `:`."""
    path = tmp_path / "we,ird:name.json"
    path.write_text(json.dumps({"nodes": [], "a\nb,c%:d": 1}))
    r = no_traceback(externspec("validate", "--strict", "--format", "github", str(path)))
    assert r.returncode == 1
    escaped = str(path).replace(",", "%2C").replace(":", "%3A")
    assert r.stdout == f"::error file={escaped},title=externspec::$: unknown key `a%0Ab,c%25:d`\n"
    assert _report.escape_data("50%\r\n") == "50%25%0D%0A"
    assert _report.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_archive_members_are_named_in_results(tmp_path: Path) -> None:
    archive = tmp_path / "pkg.pt2"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("pkg/data/aotinductor/model/m.wrapper.json", json.dumps(BAD))
    (result,) = results(externspec("validate", "--json", str(archive)))
    member = f"{archive}:pkg/data/aotinductor/model/m.wrapper.json"
    assert result["file"] == str(archive) and {e["source"] for e in result["errors"]} == {member}
    r = externspec("validate", "--format", "github", str(archive))
    assert r.stdout.splitlines()[0] == (f"::error file={archive},title=externspec::"
                                        "pkg/data/aotinductor/model/m.wrapper.json: $.nodes[0].name: "
                                        "expected `str`, got `int`")


def test_inspect_json_numbers_as_numbers_and_many_files(files: dict[str, Path]) -> None:
    r = no_traceback(externspec("inspect", "--no-slots", "--format", "json", str(files["good.json"]),
                                str(files["bad.json"])))
    assert r.returncode == 1
    good, bad = results(r)
    (doc,) = good["documents"]
    alpha = doc["nodes"][0]["inputs"][2]
    assert alpha == {"name": "alpha", "member": "as_float", "value": 2.5, "text": "2.5", "slots": None}
    assert doc["nodes"][0]["outputs"] == [{"member": "as_tensor", "value": {"name": "buf0"}, "text": "buf0"}]
    assert doc["nodes"][0]["index"] == 0
    assert bad["ok"] is False and bad["documents"] == [] and len(bad["errors"]) == 4
    g = externspec("inspect", "--no-slots", "--format", "github", str(files["good.json"]), str(files["bad.json"]))
    assert g.returncode == 1 and len(g.stdout.splitlines()) == 4  # the problems only, no table
    assert all(line.startswith(f"::error file={files['bad.json']},") for line in g.stdout.splitlines())
    # Text keeps going past a bad file too, its error on stderr.
    text = externspec("inspect", "--no-slots", str(files["bad.json"]), str(files["good.json"]))
    assert text.returncode == 1 and "aten::add.Tensor" in text.stdout
    assert text.stderr.startswith(f"externspec inspect: {files['bad.json']}: $.nodes[0].name")


def test_check_spec_formats(files: dict[str, Path], tmp_path: Path) -> None:
    """A node whose argument the op does not have: a spec_mismatch at that node."""
    wrong = json.loads(json.dumps(GOOD))
    wrong["nodes"][0]["node"]["inputs"][2]["name"] = "beta"
    (tmp_path / "wrong.json").write_text(json.dumps(wrong))
    r = no_traceback(externspec("check-spec", "--json", str(files["good.json"]), str(tmp_path / "wrong.json")))
    assert r.returncode == 1
    good, bad = results(r)
    assert good["documents"][0]["nodes"] == [{"label": good["documents"][0]["nodes"][0]["label"], "int_inputs": 0,
                                              "int_outputs": 0, "tensor_inputs": 2, "tensor_outputs": 1}]
    (error,) = bad["errors"]
    assert error["kind"] == "spec_mismatch" and error["path"] == "$.nodes[0]" and "`beta`" in error["message"]
    g = externspec("check-spec", "--format", "github", str(tmp_path / "wrong.json"))
    assert g.returncode == 1 and g.stdout.startswith(f"::error file={tmp_path / 'wrong.json'},title=externspec::"
                                                     "$.nodes[0]: node 0 `buf0`")


def test_compat_formats(tmp_path: Path) -> None:
    text = IDL.read_text()
    line = text.splitlines().index("  20: optional i64 index;") + 1
    new = tmp_path / "new.thrift"
    new.write_text(text.replace("  20: optional i64 index;", "  20: optional string index;"))
    (result,) = results(no_traceback(externspec("compat", "--format", "json", str(IDL), str(new))))
    assert result["file"] == str(new) and result["ok"] is False and result["required_bump"] == "forbidden"
    finding, verdict = result["errors"]
    assert (finding["kind"], finding["file"], finding["line"], finding["col"]) == ("FIELD_SAME_TYPE", str(new), line, 3)
    assert verdict["kind"] == "version_bump" and "Options: 1. revert the forbidden changes" in verdict["message"]
    g = externspec("compat", "--format", "github", str(IDL), str(new))
    assert g.returncode == 1
    first = g.stdout.splitlines()[0]
    assert first.startswith(f"::error file={new},line={line},col=3,title=externspec::[FIELD_SAME_TYPE] field 20")
    # An unchanged schema: ok, nothing to report.
    same = externspec("compat", "--format", "github", str(IDL), str(IDL))
    assert same.returncode == 0 and same.stdout == ""
    # A minor change with its minor bump: ok, and the change shows as a notice.
    minor = tmp_path / "minor.thrift"
    added = "  20: optional i64 index;\n  30: optional string label;"
    minor.write_text(text.replace("  20: optional i64 index;", added)
                     .replace(f"SCHEMA_VERSION = {CURRENT_IDL}", f"SCHEMA_VERSION = {NEXT_MINOR_IDL}"))
    n = externspec("compat", "--format", "github", str(IDL), str(minor))
    assert n.returncode == 0, n.stdout
    assert n.stdout.startswith(f"::notice file={minor},line={line + 1},col=3,title=externspec::[FIELD_ADDED_OPTIONAL]")
    missing = results(externspec("compat", "--json", str(IDL), str(tmp_path / "nope.thrift")))
    assert missing[0]["errors"][0]["kind"] == "input"


def test_format_is_the_report_format_and_from_the_input_format(files: dict[str, Path], tmp_path: Path) -> None:
    r = no_traceback(externspec("validate", "--format", "binary", str(files["good.json"])))
    assert r.returncode == 2 and "the input format is --from binary" in r.stderr
    compact = tmp_path / "spec.dat"
    compact.write_bytes(thrift.dumps(es.loads(json.dumps(GOOD), es.ExternKernelNodes), "compact"))
    (result,) = results(externspec("validate", "--from", "compact", "--json", str(compact)))
    assert result["ok"] is True
    (result,) = results(externspec("inspect", "--no-slots", "--from", "compact", "--json", str(compact)))
    assert result["documents"][0]["nodes"][0]["target"] == "aten::add.Tensor"


def test_color_flag_and_force_color(files: dict[str, Path]) -> None:
    """Colour off in a pipe by default; FORCE_COLOR turns it on, NO_COLOR wins over it, and
    `--color` (before or after the command) wins over both."""
    good = str(files["good.json"])

    def coloured(*args: str, **env: str) -> bool:
        base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
        r = externspec(*args, env={**base, **env})
        assert r.returncode == 0, r.stderr
        return "\x1b[32mOK\x1b[0m" in r.stdout

    assert not coloured("validate", good)
    assert coloured("validate", good, FORCE_COLOR="1")
    assert not coloured("validate", good, FORCE_COLOR="1", NO_COLOR="1")
    assert coloured("validate", "--color", "always", good, NO_COLOR="1")
    assert coloured("--color", "always", "validate", good)
    assert not coloured("--color", "always", "validate", good, "--color", "never", FORCE_COLOR="1")


# OSC 52 (writes the clipboard), BEL, CR, a C1 CSI, and newlines starting GitHub workflow commands.
HOSTILE = "buf\x1b]52;c;ZXZpbA==\x07\r\n::error::pwned\n::stop-commands::tok\x9b31m\x7f"


@pytest.mark.parametrize("args", [["inspect"], ["check-spec"], ["validate", "--strict"]],
                         ids=["inspect", "check-spec", "validate"])
def test_text_output_masks_the_control_characters_of_spec_strings(tmp_path: Path, args: list[str]) -> None:
    """Issue 36, item 7: `inspect` printed 17 ESC and 8 lines starting `::` from one spec. Control
    characters are shown in caret notation, as git shows a remote's: `^[`, `^M`, `^J`."""
    path = tmp_path / "spec.json"
    node = {**NODE, "outputs": [{"as_tensor": {"name": HOSTILE}}]}
    path.write_text(json.dumps({"nodes": [{"name": HOSTILE, "node": node}], HOSTILE: 1}))
    r = no_traceback(externspec(*args, str(path)))
    out = r.stdout + r.stderr
    assert "^[]52;c;ZXZpbA==^G^M^J::error::pwned^J::stop-commands::tok\\u009b31m^?" in out, out
    for c in "\x1b\x07\r\x9b\x7f":
        assert c not in out
    assert not [line for line in out.splitlines() if line.startswith("::")]


def test_compat_refuses_a_type_nested_too_deep_in_every_format(tmp_path: Path) -> None:
    """Issue 36, item 11: a 6 KB IDL nesting `list<>` 1000 deep was "internal error ...
    RecursionError", and `--format json` printed nothing. A SchemaError at the field instead."""
    deep = tmp_path / "deep.thrift"
    deep.write_text("struct A {\n  1: required " + "list<" * 1000 + "i64" + ">" * 1000 + " x;\n}\n")
    text = no_traceback(externspec("compat", str(deep), str(deep)))
    assert text.returncode == 1
    assert f"{deep}:2:3: the type nests containers more than 32 deep" in text.stderr
    (result,) = results(no_traceback(externspec("compat", "--format", "json", str(deep), str(deep))))
    assert result["errors"] == [{"kind": "schema", "path": "", "message": "the type nests containers more than 32 deep",
                                 "file": str(deep), "line": 2, "col": 3}]
