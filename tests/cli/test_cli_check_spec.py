"""`externspec check-spec`: the executor's load-time validation from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import externspec as es
from externspec.cli import main
from tests.support.cli import externspec
from tests.support.versions import CURRENT_TEXT


def write_spec(tmp_path: Path) -> Path:
    b = es.SpecBuilder()
    b.add(torch.ops.aten.split.Tensor, (torch.ones(6), 2))
    path = tmp_path / "spec.json"
    es.dump(b.build(), path)
    return path


def test_valid_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-spec", str(write_spec(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert f"1 nodes, schema {CURRENT_TEXT}: every node matches its op" in out
    assert "node 0 `buf0` (aten::split.Tensor): ints 2 in + 0 returned, tensors 1 in + 3 out" in out


def test_mismatched_spec_exits_1_with_the_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_spec(tmp_path)
    doc = json.loads(path.read_text())
    doc["nodes"][0]["node"]["inputs"][1]["arg"] = {"as_float": 2.0}
    path.write_text(json.dumps(doc))
    assert main(["check-spec", str(path)]) == 1
    assert "argument `split_size` is `as_float` in the spec" in capsys.readouterr().err


def test_deeply_nested_op_schema_is_refused_not_a_crash(tmp_path: Path) -> None:
    """A 10 KB op_schema of nested parentheses overflowed the C stack in torch's schema parser (the
    command died with SIGSEGV); run in a subprocess so that a regression fails instead of killing pytest."""
    path = write_spec(tmp_path)
    doc = json.loads(path.read_text())
    nested = "f(" + "(" * 5000 + "Tensor" + ")" * 5000 + " a) -> ()"
    doc["nodes"][0]["node"]["metadata"]["externspec.op_schema"] = nested
    path.write_text(json.dumps(doc))
    run = externspec("check-spec", str(path))
    assert run.returncode == 1, run
    assert "metadata `externspec.op_schema` nests 5001 levels deep (the limit is 32)" in run.stderr


def test_custom_ops_module_is_imported_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.support import custom_ops as co

    b = es.SpecBuilder()
    b.add(co.list_out, (torch.ones(2), 2))
    path = tmp_path / "spec.json"
    es.dump(b.build(), path)
    assert main(["check-spec", str(path), "--load", "tests.support.custom_ops"]) == 0
    assert "(externspec_test::list_out): ints 1 in + 0 returned, tensors 1 in + 2 out" in capsys.readouterr().out


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-spec", str(tmp_path / "nope.json")]) == 1
    assert "No such file" in capsys.readouterr().err


def test_unimportable_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-spec", str(write_spec(tmp_path)), "--load", "no_such_module_here"]) == 1
    assert "--load no_such_module_here: ModuleNotFoundError" in capsys.readouterr().err
