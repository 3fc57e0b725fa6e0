"""The floor executor of the C++ executor benchmarks (benchmarks/cpp/floor/): a Python module of
its own, built with CMake against the runtime library es.cpp runs, so benchmark code does not ship
in es.cpp's binding and the figures are those of the library that does.

`es.cpp.runtime_cmake_dir()` is that library's CMake package: the wheel's, or the build tree of es.cpp's
source build. The module is built as es.cpp's first use builds (externspec/cpp/_cmake.py: a cache
folder named by a hash of what the build reads, under a lock), once per package folder (a source
build's folder name carries its content hash), public headers, floor source, interpreter ABI and
torch build, with torch's pybind11 as es.cpp's binding is.
"""

from __future__ import annotations

import functools
import sys
from types import ModuleType

from externspec._cache import cache_dir
from externspec.cpp import _cmake
from externspec.cpp._cmake import SOURCE_ROOT

SOURCE = "benchmarks/cpp/floor"


@functools.cache
def module() -> ModuleType:
    """The floor module (`Calls`, `FloorRunner`) over the runtime library es.cpp has loaded (once per
    process: pybind refuses to register its classes twice)."""
    from torch.utils import cmake_prefix_path

    import externspec as es

    package = es.cpp.runtime_cmake_dir()
    key = _cmake.source_hash((SOURCE, "python/externspec/include"),
                             (str(package), *_cmake.extension_abi()))
    build_dir = cache_dir() / "bench" / f"floor-{key}"
    _cmake.build(build_dir, ["-DCMAKE_BUILD_TYPE=Release", f"-Dexternspec_DIR={package}",
                             f"-DPython_EXECUTABLE={sys.executable}", f"-DCMAKE_PREFIX_PATH={cmake_prefix_path}"],
                 "externspec_floor", what="the floor executor (benchmarks/cpp/floor)", source=SOURCE_ROOT / SOURCE)
    return _cmake.import_built("externspec_floor", next(build_dir.glob("externspec_floor*.so")))
