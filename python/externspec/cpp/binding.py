"""Where es.cpp's compiled binding comes from: the module a wheel ships, else a build of this
source tree on first use.

An installed wheel carries the binding prebuilt (`externspec/cpp/_binding.<soabi>.so`, over the
runtime library `externspec/lib/libexternspec_runtime.so`; CMakeLists.txt) and loads it on first
use, not on import, so `import externspec` stays light. A source checkout (the editable install of
`make setup`) has no prebuilt binding: there the first use runs the same CMake build the wheel runs
(CMakeLists.txt, the one description of csrc/'s sources, flags and CUDA path), with a message on
stderr saying so. That build goes to `<cache>/cpp/<name>/`, where the name carries a hash of what
the build reads (csrc/, the headers, CMakeLists.txt and cmake/), the flags and the torch/Python
versions: any change builds afresh, and an unchanged tree imports the cached library without
invoking CMake. `<cache>` is `$EXTERNSPEC_CACHE_DIR`, else `.cache/` in a source checkout, else
`~/.cache/externspec`. `EXTERNSPEC_CPP_CFLAGS`/`EXTERNSPEC_CPP_LDFLAGS` (e.g. AddressSanitizer's)
always build from source.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import torch

from .. import _torch_support, errors
from .._cache import cache_dir
from ..cpp_include import get_cmake_dir
from ..errors import ExternSpecError

# The source tree of a checkout or an sdist: CMakeLists.txt beside python/externspec/.
SOURCE_ROOT = Path(__file__).resolve().parents[3]
# What the build reads (pyproject.toml only for checks at configure time: it changes no output).
_BUILD_INPUTS = ("python/externspec/cpp/csrc", "python/externspec/include", "cmake", "CMakeLists.txt")

_lock = threading.Lock()
_module: ModuleType | None = None


def _source_hash(flags: Sequence[str]) -> str:
    h = hashlib.sha256()
    for relative in _BUILD_INPUTS:
        top = SOURCE_ROOT / relative
        for path in sorted([top] if top.is_file() else (p for p in top.rglob("*") if p.is_file())):
            h.update(str(path.relative_to(SOURCE_ROOT)).encode())
            h.update(path.read_bytes())
    h.update(repr((tuple(flags), torch.__version__, sys.version_info[:3])).encode())
    return h.hexdigest()[:16]


def _run_logged(cmd: list[str], log: Path, *, show: bool) -> None:
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
        raise ExternSpecError(f"building es.cpp failed ({' '.join(cmd[:2])}); the log is {log}:\n{tail}")


def build(extra_cflags: Sequence[str] = (), extra_ldflags: Sequence[str] = ()) -> ModuleType:
    """Build (or load from the cache) the binding from source with CMakeLists.txt, with extra
    compiler and linker flags (e.g. AddressSanitizer's). Parallel builds of one tree (pytest workers,
    processes of several checkouts sharing the cache) wait for each other on a lock file."""
    cmakelists = SOURCE_ROOT / "CMakeLists.txt"
    if not cmakelists.is_file():
        raise ExternSpecError(f"cannot build es.cpp: its C++ sources are not installed ({cmakelists} is missing); "
                              "building with custom flags needs a source checkout or the sdist")
    message = _torch_support.refusal(torch.__version__, _torch_support.requirement())
    if message is not None:
        raise ExternSpecError(f"cannot build es.cpp: {message}")
    build_dir = cache_dir() / "cpp" / f"externspec_cpp_{_source_hash([*extra_cflags, '|', *extra_ldflags])}"
    library = build_dir / f"_binding{sysconfig.get_config_var('EXT_SUFFIX')}"
    built = build_dir / "built"  # written once the library is complete
    if not built.exists():
        build_dir.mkdir(parents=True, exist_ok=True)
        with (build_dir / "lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not built.exists():
                _cmake_build(build_dir, extra_cflags, extra_ldflags)
                built.touch()
    # Import the library directly (no CMake run). Its RUNPATH finds libexternspec_runtime.so beside it.
    spec = importlib.util.spec_from_file_location("_binding", library)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cmake_build(build_dir: Path, extra_cflags: Sequence[str], extra_ldflags: Sequence[str]) -> None:
    from torch.utils import cmake_prefix_path

    cmake = shutil.which("cmake")
    if cmake is None:
        raise ExternSpecError("cannot build es.cpp: CMake (3.18 or newer) is not on PATH (pip install cmake)")
    print(f"externspec: building es.cpp from {SOURCE_ROOT} (CMakeLists.txt) against torch {torch.__version__} into "
          f"{build_dir} (once per source change; a few minutes)...", file=sys.stderr, flush=True)
    start = time.monotonic()
    # What a failed or killed build left is removed: its CMakeCache.txt may name another checkout's
    # sources (checkouts with equal sources share the folder).
    for left in build_dir.iterdir():
        if left.is_dir():
            shutil.rmtree(left)
        elif left.name != "lock":
            left.unlink()
    log = build_dir / "build.log"
    ldflags = " ".join(extra_ldflags)
    _run_logged([cmake, "-S", str(SOURCE_ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                 "-DEXTERNSPEC_PYTHON=ON", f"-DPython_EXECUTABLE={sys.executable}",
                 f"-DCMAKE_PREFIX_PATH={cmake_prefix_path}", f"-DCMAKE_CXX_FLAGS={' '.join(extra_cflags)}",
                 f"-DCMAKE_SHARED_LINKER_FLAGS={ldflags}", f"-DCMAKE_MODULE_LINKER_FLAGS={ldflags}"],
                log, show=False)
    # MAX_JOBS as for torch's extension builds; the build's own [n/m] lines are its progress.
    jobs = os.environ.get("MAX_JOBS") or str(os.cpu_count() or 1)
    _run_logged([cmake, "--build", str(build_dir), "--target", "externspec_cpp", "--parallel", jobs], log, show=True)
    print(f"externspec: built {build_dir} in {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)


def prebuilt() -> ModuleType | None:
    """The binding a wheel ships (`externspec.cpp._binding`), or None in a source checkout."""
    if importlib.util.find_spec(f"{__package__}._binding") is None:
        return None
    module = importlib.import_module(f"{__package__}._binding")
    built, running = module.torch_version, torch.__version__.split("+")[0]
    if built.split(".")[:2] != running.split(".")[:2]:
        raise ExternSpecError(f"es.cpp ({module.__file__}) was built against torch {built}, but torch {running} "
                              "is installed: torch's C++ ABI changes between releases; install the torch it was "
                              "built for, or build externspec against this one (pip install --no-build-isolation "
                              "externspec)")
    return module


def extension() -> ModuleType:
    """The compiled extension: the wheel's prebuilt binding, else built on first use (thread-safe;
    cached across processes)."""
    global _module
    with _lock:
        if _module is None:
            flags = os.environ.get("EXTERNSPEC_CPP_CFLAGS", "").split()
            ldflags = os.environ.get("EXTERNSPEC_CPP_LDFLAGS", "").split()
            module = None if flags or ldflags else prebuilt()
            if module is None:
                module = build(flags, ldflags)
            # The binding raises externspec's own error classes, and builds records with `problem`.
            module._register_errors(errors.DecodeError, errors.VersionError, errors.SpecMismatchError,
                                    errors.CallError, errors.UnsupportedError, errors.PackageError,
                                    errors.ModelError, errors.problem)
            _module = module
        return _module


def cmake_dir() -> Path:
    """The CMake package (externspecConfig.cmake, for `-Dexternspec_DIR=`) of the runtime library es.cpp
    runs: the wheel's, else the build tree of its source build (CMakeLists.txt exports one there). C++
    built against it (benchmarks/cpp/floor) links the very library es.cpp has loaded."""
    module = extension()
    if module is prebuilt():
        return Path(get_cmake_dir())
    assert module.__file__ is not None
    return Path(module.__file__).parent
