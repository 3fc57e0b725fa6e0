"""Say what a file is (issue 44, item 6; pytorch#172004): given something that is not an AOTInductor
package, the runner (`es.cpp.AOTIRunner`), `aoti.read_package` and the command line name what it is
and what to do, with the same words (`externspec.file_kind.KINDS`, and its C++ twin
`aoti_package/file_kind.cpp`) and the kind as data (`PackageError.kind`, the report's `kind`). Both
executors given a package's path instead of a spec say so alike."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
import torch

import externspec as es
from externspec import aoti, file_kind
from tests.support.artifacts import exported_program
from tests.support.cli import externspec
from tests.support.paths import REPO

KINDS = ("exported_program", "torchscript", "torch_save", "other_zip", "not_zip")


class _Scripted(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One file of each kind, each named `.pt2` as a user would have it."""
    out = tmp_path_factory.mktemp("kinds")
    paths = {kind: out / f"{kind}.pt2" for kind in KINDS}
    paths["exported_program"].write_bytes(exported_program("mlp").read_bytes())
    torch.jit.save(torch.jit.script(_Scripted()), str(paths["torchscript"]))
    torch.save({"w": torch.ones(2)}, paths["torch_save"])
    with zipfile.ZipFile(paths["other_zip"], "w") as z:
        z.writestr("notes/readme.txt", "hello")
    paths["not_zip"].write_bytes(b"\x00not a zip at all")
    return paths


def _sentence(path: Path, kind: str) -> str:
    return f"{path}: {file_kind.describe(kind)}"


def test_each_file_is_of_its_kind(files: dict[str, Path]) -> None:
    for kind, path in files.items():
        if kind != "not_zip":
            assert file_kind.archive_kind(zipfile.ZipFile(path).namelist()) == kind


@pytest.mark.parametrize("kind", KINDS)
def test_read_package_and_the_runner_say_the_same(kind: str, files: dict[str, Path]) -> None:
    path = files[kind]
    with pytest.raises(es.PackageError) as python:
        aoti.read_package(path)
    with pytest.raises(es.PackageError) as cpp:
        es.cpp.AOTIRunner(str(path))
    assert (python.value.kind, str(python.value)) == (kind, _sentence(path, kind))
    assert (cpp.value.kind, str(cpp.value)) == (kind, _sentence(path, kind))
    assert "aoti_compile_and_package" in str(cpp.value)


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "exported_program"])
def test_every_command_names_the_kind(kind: str, files: dict[str, Path], tmp_path: Path) -> None:
    path = str(files[kind])
    for command in ("validate", "inspect", "check-spec"):
        report = externspec(command, "--json", path)
        assert report.returncode == 1, (command, report.stderr)
        (error,) = json.loads(report.stdout)[0]["errors"]
        assert error["kind"] == kind, command  # other_zip says first where it looked for documents
        assert error["message"].endswith(file_kind.describe(kind)), command
    for args in (["upgrade", path, str(tmp_path / "out.pt2")], ["convert", path, str(tmp_path / "out.json")]):
        result = externspec(*args)
        assert result.returncode == 1, args
        assert f"{path}: " in result.stderr and file_kind.describe(kind) in result.stderr, args


def test_an_exported_program_is_valid_but_no_package(files: dict[str, Path]) -> None:
    """validate and inspect read an ExportedProgram's archive (its model.json is a schema document);
    check-spec, which needs a package's extern-kernel file, says what the archive is instead."""
    path = str(files["exported_program"])
    assert externspec("validate", path).returncode == 0
    report = externspec("check-spec", "--json", path)
    (error,) = json.loads(report.stdout)[0]["errors"]
    assert (report.returncode, error["kind"]) == (1, "exported_program")
    assert "torch._inductor.aoti_compile_and_package(torch.export.load(path)" in error["message"]


@pytest.mark.parametrize("executor", ["python", "cpp"])
def test_executors_given_a_package_say_so(executor: str) -> None:
    package = REPO / "tests" / "data" / "matrix" / "2.15" / "lite.pt2"
    make = es.ProxyExecutor if executor == "python" else es.cpp.ProxyExecutor
    with pytest.raises(es.PackageError) as info:
        make(package)
    assert info.value.kind == "aoti_package"
    assert str(info.value) == (f"{package}: an AOTInductor package, not an extern-kernel spec (JSON): "
                               f"{file_kind.SPEC_OF_PACKAGE}")
