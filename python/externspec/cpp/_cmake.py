"""Cached CMake builds of a source checkout (CMakeLists.txt, the one description of csrc/'s build):
es.cpp's first use (binding.py) and the fuzz harnesses (tests/fuzz/run_fuzz.py); C++ projects built
against it (the benchmarks' floor executor, benchmarks/floor.py) build the same way. Each build goes
to a folder of the cache whose name carries a hash of what it reads (`source_hash`): any change
builds afresh, an unchanged tree reuses the folder without invoking CMake. Parallel builds of one
tree (pytest workers, processes of several checkouts sharing the cache) wait for each other on a
lock file."""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType

from ..errors import ExternSpecError

# The source tree of a checkout or an sdist: CMakeLists.txt beside python/externspec/.
SOURCE_ROOT = Path(__file__).resolve().parents[3]
# csrc/, relative to SOURCE_ROOT (CMakeLists.txt's EXTERNSPEC_CSRC_DIR).
CSRC = "python/externspec/cpp/csrc"
# What the build of csrc/ reads (pyproject.toml only for checks at configure time: it changes no output).
BUILD_INPUTS = (CSRC, "python/externspec/include", "cmake", "CMakeLists.txt")


def source_hash(inputs: Iterable[str], extra: object) -> str:
    """A hash of the files under `inputs` (paths relative to SOURCE_ROOT: files or folders) and of
    `repr(extra)` (what else decides the output: flags, compiler and library versions)."""
    h = hashlib.sha256()
    for relative in inputs:
        top = SOURCE_ROOT / relative
        for path in sorted([top] if top.is_file() else (p for p in top.rglob("*") if p.is_file())):
            h.update(str(path.relative_to(SOURCE_ROOT)).encode())
            h.update(path.read_bytes())
    h.update(repr(extra).encode())
    return h.hexdigest()[:16]


def extension_abi() -> tuple[str, str, str]:
    """What a Python extension built against torch loads into, for a build's hash: the interpreter's
    ABI (EXT_SUFFIX: implementation, minor release, debug or free-threaded build, platform; CPython
    keeps its ABI across micro releases, so one build serves 3.11.2 and 3.11.7, e.g. Triton's Python
    backend stub and a venv) and torch's build (its version with the local tag, `+cpu`, and commit)."""
    import torch

    return sysconfig.get_config_var("EXT_SUFFIX"), torch.__version__, torch.version.git_version


def _run_logged(cmd: list[str], log: Path, *, what: str, show: bool) -> None:
    """Run one CMake step, appending its output to `log` (and to stderr when `show`: the build's
    progress lines); a failure raises ExternSpecError with the tail of its output."""
    with log.open("a", encoding="utf-8") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                out.write(line)
                if show:
                    print(line, end="", file=sys.stderr, flush=True)
    if proc.returncode != 0:
        tail = "".join(log.read_text(encoding="utf-8").splitlines(keepends=True)[-40:])
        raise ExternSpecError(f"building {what} failed ({' '.join(cmd[:2])}); the log is {log}:\n{tail}")


def build(build_dir: Path, configure: Sequence[str], target: str, *, what: str, source: Path = SOURCE_ROOT) -> None:
    """Configure `source` (a folder with a CMakeLists.txt) into `build_dir` with the cache entries
    `configure` (once per folder) and build `target` there (once), unless done; `what` names it in
    messages."""
    built = build_dir / f"built-{target}"  # written once the target is complete
    if built.exists():
        return
    build_dir.mkdir(parents=True, exist_ok=True)
    with (build_dir / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if built.exists():
            return
        cmake = shutil.which("cmake")
        if cmake is None:
            raise ExternSpecError(f"cannot build {what}: CMake (3.18 or newer) is not on PATH (pip install cmake)")
        print(f"externspec: building {what} from {source} (CMakeLists.txt) into {build_dir} "
              "(once per source change; a few minutes)...", file=sys.stderr, flush=True)
        start = time.monotonic()
        log = build_dir / "build.log"
        configured = build_dir / "configured"
        if not configured.exists():
            # What a failed or killed configure left is removed: its CMakeCache.txt may name another
            # checkout's sources (checkouts with equal sources share the folder).
            for left in build_dir.iterdir():
                if left.is_dir():
                    shutil.rmtree(left)
                elif left.name != "lock":
                    left.unlink()
            _run_logged([cmake, "-S", str(source), "-B", str(build_dir), *configure], log, what=what, show=False)
            configured.touch()
        # MAX_JOBS as for torch's extension builds; the build's own [n/m] lines are its progress.
        jobs = os.environ.get("MAX_JOBS") or str(os.cpu_count() or 1)
        _run_logged([cmake, "--build", str(build_dir), "--target", target, "--parallel", jobs], log, what=what,
                    show=True)
        built.touch()
        print(f"externspec: built {what} in {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)


def import_built(name: str, library: Path) -> ModuleType:
    """Import the Python extension module `name` a build left at `library`, directly (no CMake run,
    no sys.path entry); its RUNPATH finds the libraries it links."""
    spec = importlib.util.spec_from_file_location(name, library)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
