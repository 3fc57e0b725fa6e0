"""The checked-in generated code matches the IDL (the drift check behind `make check-generated`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from externspec.codegen import load_schema
from externspec.codegen.generate import default_targets, render
from externspec.codegen.naming import carries_banner
from tests.support.paths import IDL, REPO


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "externspec.codegen", "check", "--idl", str(root / "schema/externspec.thrift"),
         "--root", str(root)],
        capture_output=True, text=True, check=False,
    )


def test_checked_in_generated_code_is_current() -> None:
    result = check(REPO)
    assert result.returncode == 0, result.stderr


def test_drift_is_caught_with_the_fixing_command(tmp_path: Path) -> None:
    shutil.copytree(REPO / "schema", tmp_path / "schema")
    shutil.copytree(REPO / "python/externspec/_generated", tmp_path / "python/externspec/_generated")
    for include in (REPO / "python/externspec/include").glob("*"):
        shutil.copytree(include, tmp_path / "python/externspec/include" / include.name)
    idl = tmp_path / "schema/externspec.thrift"
    idl.write_text(idl.read_text().replace("struct TokenArgument {", "/** Edited. */\nstruct TokenArgument {"))
    result = check(tmp_path)
    assert result.returncode == 1
    assert "models.py: differs from what the IDL generates" in result.stderr
    assert "run `make generate`" in result.stderr


def test_only_generator_output_carries_the_generated_banner() -> None:
    """A file stamped "@generated ... DO NOT EDIT" is one the generator writes (or a golden of its
    output); hand-written code, the C++ headers beside externspec.h included, is edited where it is."""
    schema = load_schema(str(IDL))
    generated = {path.relative_to(REPO) for path in render(schema, default_targets(REPO))}
    goldens = {Path(p) for p in subprocess.run(["git", "ls-files", "tests/codegen/cases/*/expected/*"], cwd=REPO,
                                               capture_output=True, text=True, check=True).stdout.split()}
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    stamped = {Path(name) for name in tracked.decode().split("\0") if name and (REPO / name).is_file()
               and carries_banner((REPO / name).read_bytes().decode("utf-8", "replace"))}
    assert stamped == generated | goldens
