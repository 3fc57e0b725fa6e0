"""The wheel from `pip wheel .`, installed with torch into a fresh venv: es.cpp is prebuilt (no
compiler runs at first use), the CMake and pkg-config packages are there and work (the compiled
codec through CMake, the README's pkg-config line as printed)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

import externspec
from externspec import _torch_support
from tests.packaging import custom_op_package
from tests.packaging.wheelenv import REPO, built_wheel, venv_env, venv_with_wheel
from tests.support import triton_server as ts
from tests.support import zoo
from tests.support.fake_torch import fake_torch
from tests.support.readme_app import APP_SOURCE, DOCUMENT, compile_lines, run_compile_line

pytestmark = pytest.mark.slow

# Run inside the venv: es.cpp's first use, load and run, then torch's own runner on the same package.
_SCRIPT = r"""
import json, os, sys, time
start = time.perf_counter()
import torch
import externspec as es
torch.ops.load_library(sys.argv[2])
imported = time.perf_counter()
runner = es.cpp.AOTIRunner(sys.argv[1])
loaded = time.perf_counter()
x, y = torch.load(sys.argv[3])
outputs = runner(x, y)
ran = time.perf_counter()
compiler_ran = os.path.exists(os.environ["COMPILER_MARKER"])  # before torch's loader, which runs c++
reference = torch._inductor.aoti_load_package(sys.argv[1])(x, y)
print(json.dumps({
    "externspec": es.__file__, "binding": es.cpp.extension().__file__, "compiler_ran": compiler_ran,
    "equal": [bool(torch.equal(a, b)) for a, b in zip(outputs, reference, strict=True)],
    "import_s": imported - start, "load_s": loaded - imported, "run_s": ran - loaded,
}))
"""


@pytest.fixture(scope="module")
def venv_python() -> Path:
    return venv_with_wheel()


def _packages(root: Path, prefix: str) -> set[str]:
    return {"/".join([prefix, *p.parent.relative_to(root).parts]) for p in root.rglob("__init__.py")}


def test_wheel_ships_the_compiled_runtime_and_every_package() -> None:
    wheel, seconds = built_wheel()
    print(f"wheel {wheel.name}: built in {seconds:.0f} s" if seconds else f"wheel {wheel.name}: cached")
    py = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert re.fullmatch(rf"externspec-[\d.]+-{py}-{py}-linux_x86_64\.whl", wheel.name)
    names = set(zipfile.ZipFile(wheel).namelist())
    assert any(re.fullmatch(r"externspec/cpp/_binding\.cpython-\d+-x86_64-linux-gnu\.so", n) for n in names)
    assert {
        "externspec/lib/libexternspec_runtime.so",
        "externspec/lib/libexternspec_codec.a",
        "externspec/share/cmake/externspec/externspecConfig.cmake",
        "externspec/share/cmake/externspec/externspecConfigVersion.cmake",
        "externspec/share/cmake/externspec/externspecTargets.cmake",
        "externspec/share/pkgconfig/externspec.pc",
        "externspec/include/externspec/externspec.h",
        "externspec/include/externspec/wire.h",
        "externspec/include/externspec/detail/codec.h",
        "externspec/include/externspec/torch/aoti_runner.h",
        "externspec/include/externspec/torch/proxy_executor.h",
    } <= names
    assert "externspec/triton/backends/externspec/libtriton_externspec.so" in names
    # the sources are the sdist's, not the wheel's
    assert not [n for n in names if "/csrc/" in n or "/triton/backend/" in n]
    # the demo (examples/), the tests and the benchmarks stay in the checkout
    assert not [n for n in names if n.split("/")[0] in ("examples", "tests", "benchmarks") or "demo" in n]
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    shipped = {n.rsplit("/", 1)[0] for n in names if n.endswith("/__init__.py")}
    tree = _packages(REPO / "python" / "externspec", "externspec") | _packages(REPO / "codegen", "externspec/codegen")
    assert shipped == tree


def _no_compiler_env(venv_python: Path, tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The venv's environment where every compiler a build could use fails loudly and leaves a mark
    (the file $COMPILER_MARKER), with an empty cache of its own (returned)."""
    fake = tmp_path / "no-compilers"
    fake.mkdir()
    marker = tmp_path / "a-compiler-ran"
    for name in ("c++", "g++", "gcc", "cc", "clang++", "ninja", "cmake"):
        (fake / name).write_text(f"#!/bin/sh\necho {name} >> {marker}\nexit 1\n")
        (fake / name).chmod(0o755)
    cache = tmp_path / "cache"
    env = venv_env(venv_python, CXX=str(fake / "c++"), CC=str(fake / "cc"), EXTERNSPEC_CACHE_DIR=str(cache),
                   COMPILER_MARKER=str(marker))
    env["PATH"] = f"{fake}:{env['PATH']}"
    return env, cache


def test_prebuilt_es_cpp_runs_a_package_with_no_compiler(venv_python: Path, tmp_path: Path) -> None:
    package = custom_op_package.package()
    inputs = tmp_path / "inputs.pt"
    torch.save(list(custom_op_package.example_inputs()), inputs)
    env, cache = _no_compiler_env(venv_python, tmp_path)
    proc = subprocess.run([str(venv_python), "-c", _SCRIPT, str(package), str(custom_op_package.ops_library()),
                           str(inputs)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    venv = venv_python.parent.parent
    assert Path(report["externspec"]).is_relative_to(venv) and Path(report["binding"]).is_relative_to(venv)
    assert Path(report["binding"]).name.startswith("_binding.")
    # Read before torch's own loader runs: torch's Python aoti_load_package itself invokes `c++`.
    assert report["compiler_ran"] is False
    assert not cache.exists() or not any(cache.iterdir())
    assert "compiling" not in proc.stderr
    assert report["equal"] == [True, True]
    print(f"fresh venv, no compiler: import torch+externspec {report['import_s']:.2f} s, "
          f"es.cpp first use + AOTIRunner load {report['load_s']:.3f} s, first run {report['run_s']:.3f} s")


_LITE_SCRIPT = r"""
import sys, torch, externspec as es
inputs, want = torch.load(sys.argv[2])
torch.testing.assert_close(es.cpp.AOTIRunner(sys.argv[1])(*inputs), want, rtol=1e-4, atol=1e-5)
try:
    torch._inductor.aoti_load_package(sys.argv[1])(*inputs)
except RuntimeError as e:
    print("torch's runner:", str(e).splitlines()[0])
"""


def test_prebuilt_es_cpp_runs_a_lite_model_equal_to_eager(venv_python: Path, tmp_path: Path) -> None:
    """docs/torch-compat.md's lite-mode MLP (dynamic batch), compiled by this torch, in the fresh venv;
    torch's own runner fails it up to 2.14 and runs it from 2.15 (`zoo.TORCH_RUNNER_RUNS_LITE_SINCE`)."""
    model = zoo.ZOO["mlp"]
    inputs = model.inputs(1)
    with torch.no_grad():
        torch.save((list(inputs), model.module()(*inputs)), tmp_path / "io.pt")
    proc = subprocess.run([str(venv_python), "-c", _LITE_SCRIPT, str(zoo.lite_package("mlp")), str(tmp_path / "io.pt")],
                          cwd=tmp_path, env=venv_env(venv_python, EXTERNSPEC_CACHE_DIR=str(tmp_path / "cache")),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    if _torch_support.minor_release(torch.__version__) >= zoo.TORCH_RUNNER_RUNS_LITE_SINCE:
        assert "torch's runner:" not in proc.stdout, proc.stdout
    else:
        assert "torch's runner: Mismatch between ints consumed and num_ints" in proc.stdout, proc.stdout


def test_pkg_config_lines_of_the_readme_work_as_printed(venv_python: Path, tmp_path: Path) -> None:
    lines = [line for line in compile_lines() if "pkg-config" in line]
    assert lines, "the README shows a pkg-config line"
    for line in lines:
        run_compile_line(line, tmp_path, venv_env(venv_python))


def test_cmake_dir_and_pkgconfig_dir_point_into_the_installed_package(venv_python: Path, tmp_path: Path) -> None:
    env = venv_env(venv_python)
    site = venv_python.parent.parent
    for flag, member in (("--cmake-dir", "externspecConfig.cmake"), ("--pkgconfig-dir", "externspec.pc")):
        out = subprocess.run([str(venv_python), "-m", "externspec.cpp_include", flag], cwd=tmp_path, env=env,
                             capture_output=True, text=True, check=True).stdout.strip()
        assert Path(out).is_relative_to(site) and (Path(out) / member).is_file()


# A CMake program that decodes with the codec compiled in the wheel (find_package without Torch).
_CMAKE_APP = """cmake_minimum_required(VERSION 3.18)
project(app LANGUAGES CXX)
find_package(externspec CONFIG REQUIRED COMPONENTS codec)
add_executable(app app.cpp)
target_link_libraries(app PRIVATE externspec::codec)
"""


def test_cmake_codec_component_links_the_codec_compiled_in_the_wheel(venv_python: Path, tmp_path: Path) -> None:
    """`externspec::codec`: the program's unit compiles with EXTERNSPEC_SEPARATE_CODEC (so it
    instantiates no codec) and links decode<T>/encode(T) from the wheel's libexternspec_codec.a."""
    (tmp_path / "CMakeLists.txt").write_text(_CMAKE_APP)
    (tmp_path / "app.cpp").write_text(APP_SOURCE % ("externspec.h", "", DOCUMENT))
    env = venv_env(venv_python)
    cmake_dir = subprocess.run([str(venv_python), "-m", "externspec.cpp_include", "--cmake-dir"], env=env,
                               capture_output=True, text=True, check=True).stdout.strip()
    build = tmp_path / "build"
    for cmd in (["cmake", "-S", str(tmp_path), "-B", str(build), f"-DCMAKE_PREFIX_PATH={cmake_dir}",
                 "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"], ["cmake", "--build", str(build)]):
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    (unit,) = json.loads((build / "compile_commands.json").read_text())
    assert "-DEXTERNSPEC_SEPARATE_CODEC" in unit["command"]
    out = subprocess.run([str(build / "app")], capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout) == (0, "aten::relu\n"), out.stderr


def _metadata(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        return z.read(name).decode().splitlines()


def test_the_wheel_requires_the_torch_minor_release_it_was_built_for() -> None:
    major, minor = _torch_support.minor_release(torch.__version__)
    requires = [line for line in _metadata(built_wheel()[0]) if line.startswith("Requires-Dist: torch")]
    assert f"Requires-Dist: torch=={major}.{minor}.*" in requires


def test_pip_refuses_the_wheel_beside_another_supported_torch(tmp_path: Path) -> None:
    """Resolved as pip would install it, into an empty target: the wheel with each other supported release."""
    running = ".".join(map(str, _torch_support.minor_release(torch.__version__)))
    others = [r for r in _torch_support.supported_releases(_torch_support.requirement()) if r != running]
    assert others
    for other in others:
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--target",
                               str(tmp_path / "target"), str(built_wheel()[0]), f"torch=={other}.*"],
                              capture_output=True, text=True, timeout=600,
                              # a machine's cap on torch (a pip constraints file) would answer first
                              env={**os.environ, "PIP_CONSTRAINT": "/dev/null"})
        output = proc.stdout + proc.stderr  # pip says why on stdout, that it failed on stderr
        assert proc.returncode != 0, other
        assert "ResolutionImpossible" in output, output
        assert f"externspec {externspec.__version__} depends on torch=={running}.*" in output, output


def _cmake_dir(venv_python: Path) -> Path:
    return Path(subprocess.run([str(venv_python), "-m", "externspec.cpp_include", "--cmake-dir"],
                               env=venv_env(venv_python), capture_output=True, text=True, check=True).stdout.strip())


def test_the_cmake_package_records_no_path_of_the_build_machine(venv_python: Path) -> None:
    """The wheel was built against this checkout's torch: no file of its CMake package names it."""
    build_torch = str(Path(torch.__file__).resolve().parent)
    for path in _cmake_dir(venv_python).iterdir():
        text = path.read_text()
        assert build_torch not in text and str(REPO) not in text, path.name


_RUNTIME_APP = """cmake_minimum_required(VERSION 3.18)
project(app LANGUAGES CXX)
find_package(externspec CONFIG REQUIRED COMPONENTS runtime)
message(STATUS "Torch ${Torch_VERSION} at ${Torch_DIR}")
"""


def _configure_runtime_app(tmp_path: Path, venv_python: Path, *prefixes: Path) -> subprocess.CompletedProcess[str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "CMakeLists.txt").write_text(_RUNTIME_APP)
    prefix_path = ";".join(map(str, [_cmake_dir(venv_python), *prefixes]))
    return subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build"),
                           f"-DCMAKE_PREFIX_PATH={prefix_path}"], env=venv_env(venv_python), capture_output=True,
                          text=True, timeout=600)


def test_cmake_runtime_finds_the_torch_beside_the_installed_package(venv_python: Path, tmp_path: Path) -> None:
    proc = _configure_runtime_app(tmp_path, venv_python)
    assert proc.returncode == 0, proc.stderr[-3000:]
    site_torch = venv_python.parent.parent / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / \
        "site-packages" / "torch"
    (line,) = [line for line in proc.stdout.splitlines() if line.startswith("-- Torch ")]
    assert line.startswith(f"-- Torch {torch.__version__.split('+')[0]} at ")
    assert Path(line.split(" at ", 1)[1]).resolve().is_relative_to(site_torch.resolve())


def test_cmake_runtime_refuses_a_torch_of_another_minor_release(venv_python: Path, tmp_path: Path) -> None:
    """The user's prefix wins over the torch beside the package, and is refused: a C++ ABI mismatch
    would link and crash later."""
    built = torch.__version__.split("+")[0]
    major, minor = _torch_support.minor_release(built)
    other = f"{major}.{minor + 1}.0"
    fake_torch(tmp_path / "torch", other)
    proc = _configure_runtime_app(tmp_path / "app", venv_python, tmp_path / "torch")
    assert proc.returncode != 0
    message = " ".join(proc.stderr.split())
    assert (f"externspec::runtime was built against Torch {built}, but Torch {other} was found "
            f"({tmp_path / 'torch' / 'share' / 'cmake' / 'Torch'}): its C++ ABI needs the same minor release"
            in message), message


def test_the_wheels_triton_backend_serves_with_no_compiler(venv_python: Path, tmp_path: Path) -> None:
    """`externspec.triton.backend_dir()` in the venv is the backend the wheel ships (nothing is built),
    and PyPI's tritonserver loads it from there (linking the venv's runtime library and torch) and
    answers the lite-mode MLP equal to eager."""
    if ts.missing():
        pytest.skip(ts.missing())
    env, cache = _no_compiler_env(venv_python, tmp_path)
    proc = subprocess.run([str(venv_python), "-m", "externspec.triton"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    backends = Path(proc.stdout.splitlines()[-1])
    assert backends.is_relative_to(venv_python.parent.parent) and (backends / "externspec").is_dir()
    assert not (tmp_path / "a-compiler-ran").exists() and not cache.exists()
    model = zoo.ZOO["mlp"]
    inputs = model.inputs(0)  # a batch of 4, the completed config's max_batch_size
    with torch.no_grad():
        want = model.module()(*inputs)
    ts.add_model(tmp_path / "models", "mlp", zoo.lite_package("mlp"))
    with ts.serving(tmp_path / "models", tmp_path, ["mlp"], externspec=backends) as server:
        c = ts.client("grpc", server)
        (got,) = ts.infer(c, "mlp", [t.numpy() for t in inputs])
        c.close()
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-5)
