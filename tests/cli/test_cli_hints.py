"""Hints that fit where the user is (issue 44, item 4): the command line names its own flags
(`--load`, `--from`, `--at-least`), never the Python API's; the top-level `--help` lists every
option; a missing optional dependency names its extra and exits with the usage-error code (2)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from externspec import thrift
from externspec.cli import SUBCOMMANDS, build_parser
from tests.support.cli import externspec
from tests.support.paths import REPO

MATRIX = REPO / "tests" / "data" / "matrix"


def _main_without(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The command in a Python where `module` cannot be imported (an optional dependency not installed)."""
    code = (f"import sys; sys.modules[{module!r}] = None\n"
            "from externspec.cli import main; raise SystemExit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO, timeout=300)


@pytest.mark.parametrize("command", [["compat", "schema/history/v1.1.thrift", "schema/externspec.thrift"],
                                     ["generate", "--check"]])
def test_missing_extra_is_named_and_a_usage_error(command: list[str]) -> None:
    r = _main_without("thriftpy2", *command)
    assert r.returncode == 2, r.stderr
    assert "pip install 'externspec[codegen]'" in r.stderr and "Traceback" not in r.stderr


def test_compat_advice_names_at_least() -> None:
    """The README's example compares the first release with today's IDL, two minors on: the advice
    that works is --at-least, and with it the check passes."""
    old, new = "schema/history/v1.0.thrift", "schema/externspec.thrift"
    failed = externspec("compat", old, new)
    assert failed.returncode == 1
    assert "1. if OLD (1.0) is an older release, not the last one before 1.2: accept any version at least as big " \
           "as required with `externspec compat --at-least`" in failed.stdout
    passed = externspec("compat", "--at-least", old, new)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.endswith("OK\n")


def test_name_defaults_without_ops_names_load(tmp_path: Path) -> None:
    r = externspec("upgrade", "--name-defaults", str(MATRIX / "2.13" / "lite.pt2"), str(tmp_path / "fixed.pt2"))
    assert r.returncode == 1
    assert "register them first with --load OPS" in r.stderr
    assert "op_libraries" not in r.stderr and "torch.ops.load_library" not in r.stderr
    assert not (tmp_path / "fixed.pt2").exists()


def test_check_spec_and_inspect_name_load() -> None:
    package = str(MATRIX / "2.13" / "lite.pt2")
    check = externspec("check-spec", "--json", package)
    (error,) = json.loads(check.stdout)[0]["errors"]
    assert (error["kind"], error["path"]) == ("spec_mismatch", "$.nodes[7]")
    assert error["message"].endswith("register them first with --load OPS (the .so library, .py file or module "
                                     "that defines them)")
    inspected = externspec("inspect", "--json", package)
    (node,) = [n for n in json.loads(inspected.stdout)[0]["documents"][0]["nodes"] if n["slots_refused"]]
    assert "--load OPS" in node["slots_refused"] and "op_libraries" not in node["slots_refused"]


@pytest.fixture(scope="module")
def spec_bytes() -> bytes:
    with zipfile.ZipFile(MATRIX / "2.15" / "lite.pt2") as z:
        return z.read(next(n for n in z.namelist() if n.endswith(".wrapper.json")))


@pytest.mark.parametrize(("name", "protocol", "hint"), [
    ("spec.tbin", "compact", "it reads as a Thrift compact ExternKernelNodes: pass --from compact"),
    ("spec.compact", "binary", "it reads as a Thrift binary ExternKernelNodes: pass --from binary"),
    ("spec.bin", "json", "it reads as JSON: pass --from json"),
])
def test_a_name_of_another_format_names_from(name: str, protocol: str, hint: str, spec_bytes: bytes,
                                             tmp_path: Path) -> None:
    import externspec as es

    path = tmp_path / name
    model = es.loads(spec_bytes, es.ExternKernelNodes)
    path.write_bytes(spec_bytes if protocol == "json" else thrift.dumps(model, protocol))  # type: ignore[arg-type]
    for command in ("validate", "inspect", "convert"):
        args = [command, str(path)] + ([str(tmp_path / "out.json")] if command == "convert" else [])
        r = externspec(*args)
        assert r.returncode == 1, command
        assert hint in r.stdout + r.stderr, command
    assert externspec("validate", "--from", protocol, str(path)).returncode == 0


def test_top_level_help_lists_every_option() -> None:
    text = externspec("--help").stdout
    for name in SUBCOMMANDS:
        sub = build_parser([name, "--help"])._subparsers._group_actions[0].choices[name]  # type: ignore[union-attr]
        for action in sub._actions:
            if action.option_strings and action.help != "==SUPPRESS==" and action.dest not in ("help", "color"):
                assert any(flag in text for flag in action.option_strings), (name, action.option_strings)
    assert "--name-defaults" in text and "--at-least" in text
