"""Where es.cpp's compiled binding comes from: the module a wheel ships, else a build of this
source tree on first use.

An installed wheel carries the binding prebuilt (`externspec/cpp/_binding.<soabi>.so`, over the
runtime library `externspec/lib/libexternspec_runtime.so`; CMakeLists.txt) and loads it on first
use, not on import, so `import externspec` stays light. A source checkout (the editable install of
`make setup`) has no prebuilt binding: there the first use runs the same CMake build the wheel runs
(CMakeLists.txt, the one description of csrc/'s sources, flags and CUDA path), with a message on
stderr saying so. That build goes to `<cache>/cpp/<name>/`, where the name carries a hash of what
the build reads (csrc/, the headers, CMakeLists.txt and cmake/), the flags, the interpreter's ABI
and torch's build (`_cmake.extension_abi`; not Python's micro release, which keeps the ABI): any
change builds afresh, and an unchanged tree imports the cached library without invoking CMake.
`<cache>` is `$EXTERNSPEC_CACHE_DIR`, else `.cache/` in a source checkout, else `~/.cache/externspec`.
`EXTERNSPEC_CPP_CFLAGS`/`EXTERNSPEC_CPP_LDFLAGS` (e.g. AddressSanitizer's) always build from source.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import sysconfig
import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import torch

from .. import _torch_support, errors
from .._cache import cache_dir
from ..cpp_include import get_cmake_dir
from ..errors import ExternSpecError
from . import _cmake

_lock = threading.Lock()
_module: ModuleType | None = None


def _source_hash(flags: Sequence[str]) -> str:
    return _cmake.source_hash(_cmake.BUILD_INPUTS, (tuple(flags), *_cmake.extension_abi()))


def build(extra_cflags: Sequence[str] = (), extra_ldflags: Sequence[str] = ()) -> ModuleType:
    """Build (or load from the cache) the binding from source with CMakeLists.txt, with extra
    compiler and linker flags (e.g. AddressSanitizer's), and import it. Parallel builds of one tree
    (pytest workers, processes of several checkouts sharing the cache) wait for each other on a lock
    file."""
    return _cmake.import_built("_binding", build_library(extra_cflags, extra_ldflags))


def build_library(extra_cflags: Sequence[str] = (), extra_ldflags: Sequence[str] = ()) -> Path:
    """`build` without the import: the path of the built extension module. A sanitizer build is
    compiled by a process without the sanitizer runtime (its compilers run at full speed) and
    imported by one that preloads it (tests/sanitize/run_sanitize.py)."""
    from torch.utils import cmake_prefix_path

    cmakelists = _cmake.SOURCE_ROOT / "CMakeLists.txt"
    if not cmakelists.is_file():
        raise ExternSpecError(f"cannot build es.cpp: its C++ sources are not installed ({cmakelists} is missing); "
                              "building with custom flags needs a source checkout or the sdist")
    message = _torch_support.refusal(torch.__version__, _torch_support.requirement())
    if message is not None:
        raise ExternSpecError(f"cannot build es.cpp: {message}")
    build_dir = cache_dir() / "cpp" / f"externspec_cpp_{_source_hash([*extra_cflags, '|', *extra_ldflags])}"
    ldflags = " ".join(extra_ldflags)
    # The extra flags after the Release ones (CMake's -O3 -DNDEBUG), so that an -O of the caller's
    # takes effect (in CMAKE_CXX_FLAGS, the sanitizer build's -O1 was overridden by -O3).
    _cmake.build(build_dir, ["-DCMAKE_BUILD_TYPE=Release", "-DEXTERNSPEC_PYTHON=ON",
                             f"-DPython_EXECUTABLE={sys.executable}", f"-DCMAKE_PREFIX_PATH={cmake_prefix_path}",
                             f"-DCMAKE_CXX_FLAGS_RELEASE={' '.join(['-O3', '-DNDEBUG', *extra_cflags])}",
                             f"-DCMAKE_SHARED_LINKER_FLAGS={ldflags}", f"-DCMAKE_MODULE_LINKER_FLAGS={ldflags}"],
                 "externspec_cpp", what=f"es.cpp against torch {torch.__version__}")
    # Its RUNPATH finds libexternspec_runtime.so beside it.
    return build_dir / f"_binding{sysconfig.get_config_var('EXT_SUFFIX')}"


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


def runtime_cmake_dir() -> Path:
    """The CMake package (externspecConfig.cmake, for `-Dexternspec_DIR=`) of the runtime library es.cpp
    runs: the wheel's, else the build tree of its source build (CMakeLists.txt exports one there). C++
    built against it (benchmarks/cpp/floor) links the very library es.cpp has loaded."""
    module = extension()
    if module is prebuilt():
        return Path(get_cmake_dir())
    assert module.__file__ is not None
    return Path(module.__file__).parent
