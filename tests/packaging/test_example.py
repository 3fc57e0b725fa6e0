"""examples/run_package, built with the commands its CMakeLists.txt documents against the installed
wheel's CMake package, runs a package with a C++ custom op library (no Python in the process) and
gives what torch's C++ AOTIModelPackageLoader gives on the same package and inputs."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import torch

from tests.packaging import custom_op_package
from tests.packaging.wheelenv import CACHE, REPO, venv_env, venv_with_wheel, wheel_key

pytestmark = pytest.mark.slow

EXAMPLE = REPO / "examples" / "run_package"


def documented_commands() -> tuple[list[str], str]:
    """The build commands of the example's header comment (joined across `\\` continuations), and
    its run line."""
    comment = "\n".join(line[2:] for line in (EXAMPLE / "CMakeLists.txt").read_text().splitlines()
                        if line.startswith("#   "))
    commands = [c.strip() for c in re.sub(r"\\\n\s*", "", comment).splitlines()]
    run = [c for c in commands if c.startswith("build/run_package/run_package ")]
    return [c for c in commands if c.startswith("cmake ")], run[0]


@pytest.fixture(scope="module")
def run_package() -> Path:
    python = venv_with_wheel()
    # A persistent build tree per wheel: a rerun of the documented commands rebuilds nothing.
    work = CACHE / wheel_key() / "example"
    work.mkdir(parents=True, exist_ok=True)
    (work / "examples").unlink(missing_ok=True)
    (work / "examples").symlink_to(REPO / "examples")
    build, _ = documented_commands()
    assert len(build) == 2, build
    for command in build:
        proc = subprocess.run(["bash", "-c", command], cwd=work, env=venv_env(python), capture_output=True,
                              text=True, timeout=1200)
        assert proc.returncode == 0, f"{command}\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    return work / "build" / "run_package" / "run_package"


def test_example_runs_a_custom_op_package_like_torchs_cpp_loader(run_package: Path, tmp_path: Path) -> None:
    _, run_line = documented_commands()
    assert run_line == "build/run_package/run_package model.pt2 inputs.pt --ops libmy_ops.so"
    package = custom_op_package.package()
    x, y = custom_op_package.example_inputs()
    torch.save([x, y], tmp_path / "inputs.pt")
    saved = tmp_path / "outputs.pt"
    proc = subprocess.run([str(run_package), str(package), str(tmp_path / "inputs.pt"),
                           "--ops", str(custom_op_package.ops_library()), "--save", str(saved)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("equal to torch's loader") == 2 and "DIFFERS" not in proc.stdout
    ours = torch.load(saved)
    expected = custom_op_package.MyOps()(x, y)
    assert len(ours) == len(expected) == 2
    for got, want in zip(ours, expected, strict=True):
        torch.testing.assert_close(got, want)


def test_without_its_op_library_the_package_is_refused_naming_the_namespace(run_package: Path,
                                                                            tmp_path: Path) -> None:
    torch.save(list(custom_op_package.example_inputs()), tmp_path / "inputs.pt")
    proc = subprocess.run([str(run_package), str(custom_op_package.package()), str(tmp_path / "inputs.pt")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ("no op `my_ops::add` is registered, nor any op of namespace `my_ops`: "
            "load the library that defines namespace `my_ops` first (AOTIRunnerOptions::op_libraries"
            ) in proc.stderr


def test_example_reports_a_missing_op_library_and_bad_usage(run_package: Path, tmp_path: Path) -> None:
    missing = tmp_path / "libnope.so"
    torch.save([torch.ones(1)], tmp_path / "i.pt")
    proc = subprocess.run([str(run_package), "m.pt2", str(tmp_path / "i.pt"), "--ops", str(missing)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stderr.startswith(f"op library {missing}: cannot load: No such file")
    usage = subprocess.run([str(run_package), "only-one-argument"], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and usage.stderr.startswith("usage: ")
