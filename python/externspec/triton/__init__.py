"""Triton Inference Server's backend for `.pt2` packages: `libtriton_externspec.so` (its C++ is in
`triton/backend/`), which runs a model whose config.pbtxt says `backend: "externspec"` with the
runtime library's `AOTIRunner`, the runner behind `es.cpp.AOTIRunner` (docs/serving.md).

`backend_dir()` returns a folder holding `externspec/libtriton_externspec.so`, for tritonserver's
`--backend-directory` (beside Triton's own backends). A wheel ships it prebuilt (`triton/backends/`
beside this file; CMakeLists.txt's EXTERNSPEC_TRITON), linking the wheel's runtime library. A source
checkout builds it on first use as the floor executor of the benchmarks is built
(`externspec/cpp/_cmake.py`): with CMake, against the CMake package of the runtime library es.cpp has
loaded, into a folder of the cache named by a hash of what the build reads.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

BACKEND_SOURCE = Path(__file__).resolve().parent / "backend"
PREBUILT = Path(__file__).resolve().parent / "backends"
LIBRARY = "libtriton_externspec.so"


@functools.cache
def backend_dir() -> Path:
    """The folder whose `externspec/` holds the backend: the wheel's, else built once per source and
    runtime. The wheel's is refused, as its es.cpp is, under a torch of another minor release."""
    from ..cpp import binding

    if (PREBUILT / "externspec" / LIBRARY).is_file() and binding.prebuilt() is not None:
        return PREBUILT
    return _build()


def _build() -> Path:
    import torch
    from torch.utils import cmake_prefix_path

    from .. import cpp
    from .._cache import cache_dir
    from ..cpp import _cmake
    from ..cpp_include import get_include

    package = cpp.runtime_cmake_dir()
    # The flags es.cpp's source build takes (`make test-sanitize`: ASan and UBSan) build the backend
    # too, after the Release ones, so a server that loads it is checked as es.cpp is.
    flags = os.environ.get("EXTERNSPEC_CPP_CFLAGS", "").split()
    ldflags = os.environ.get("EXTERNSPEC_CPP_LDFLAGS", "").split()
    # Python is not part of the key: the backend runs in the server, not in an interpreter.
    key = _cmake.source_hash((str(BACKEND_SOURCE.relative_to(_cmake.SOURCE_ROOT)), "python/externspec/include"),
                             (str(package), torch.__version__, *flags, "--", *ldflags))
    build_dir = cache_dir() / "triton" / f"backend-{key}"
    out = build_dir / "backends"
    _cmake.build(build_dir, ["-DCMAKE_BUILD_TYPE=Release", f"-Dexternspec_DIR={package}",
                             f"-DCMAKE_PREFIX_PATH={cmake_prefix_path}", f"-DEXTERNSPEC_INCLUDE_DIR={get_include()}",
                             f"-DCMAKE_LIBRARY_OUTPUT_DIRECTORY={out / 'externspec'}",
                             f"-DCMAKE_CXX_FLAGS_RELEASE={' '.join(['-O3', '-DNDEBUG', *flags])}",
                             f"-DCMAKE_SHARED_LINKER_FLAGS={' '.join(ldflags)}"],
                 "triton_externspec", what="the Triton backend (externspec/triton/backend)", source=BACKEND_SOURCE)
    return out
