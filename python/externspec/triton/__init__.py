"""Triton Inference Server's backend for `.pt2` packages: `libtriton_externspec.so` (its C++ is in
`triton/backend/`), which runs a model whose config.pbtxt says `backend: "externspec"` with the
runtime library's `AOTIRunner`, the runner behind `es.cpp.AOTIRunner` (docs/serving.md).

`backend_dir()` returns a folder holding `externspec/libtriton_externspec.so`, for tritonserver's
`--backend-directory` (beside Triton's own backends). The library is built as the floor executor of the
benchmarks is (`externspec/cpp/_cmake.py`): with CMake, against the CMake package of the runtime
library es.cpp has loaded, into a folder of the cache named by a hash of what the build reads.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

BACKEND_SOURCE = Path(__file__).resolve().parent / "backend"
LIBRARY = "libtriton_externspec.so"


@functools.cache
def backend_dir() -> Path:
    """The folder whose `externspec/` holds the built backend (built once per source and runtime)."""
    import torch
    from torch.utils import cmake_prefix_path

    from .. import cpp
    from .._cache import cache_dir
    from ..cpp import _cmake
    from ..cpp_include import get_include

    package = cpp.runtime_cmake_dir()
    key = _cmake.source_hash((str(BACKEND_SOURCE.relative_to(_cmake.SOURCE_ROOT)), "python/externspec/include"),
                             (str(package), torch.__version__, sys.version_info[:3]))
    build_dir = cache_dir() / "triton" / f"backend-{key}"
    out = build_dir / "backends"
    _cmake.build(build_dir, ["-DCMAKE_BUILD_TYPE=Release", f"-Dexternspec_DIR={package}",
                             f"-DCMAKE_PREFIX_PATH={cmake_prefix_path}", f"-DEXTERNSPEC_INCLUDE_DIR={get_include()}",
                             f"-DCMAKE_LIBRARY_OUTPUT_DIRECTORY={out / 'externspec'}"],
                 "triton_externspec", what="the Triton backend (externspec/triton/backend)", source=BACKEND_SOURCE)
    return out
