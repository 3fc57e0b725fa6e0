"""The floor executor of the C++ executor benchmarks (benchmarks/cpp/floor/): a Python module of
its own, built with CMake against the runtime library es.cpp runs, so benchmark code does not ship
in es.cpp's binding and the figures are those of the library that does.

`es.cpp.cmake_dir()` is that library's CMake package: the wheel's, or the build tree of es.cpp's
source build. The module is built once per package folder (a source build's folder name carries
its content hash), public headers, torch version and floor source, under the artifacts cache's file
lock (tests/support/artifacts.py), with torch's pybind11 as es.cpp's binding is.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from externspec.cpp_include import get_include
from tests.support.artifacts import _cached

SOURCE = Path(__file__).with_name("cpp") / "floor"


def _configure_and_build(package: Path, out: Path) -> None:
    from torch.utils import cmake_prefix_path

    jobs = os.environ.get("MAX_JOBS") or str(os.cpu_count() or 1)
    for cmd in (["cmake", "-S", str(SOURCE), "-B", str(out), "-DCMAKE_BUILD_TYPE=Release",
                 f"-Dexternspec_DIR={package}", f"-DPython_EXECUTABLE={sys.executable}",
                 f"-DCMAKE_PREFIX_PATH={cmake_prefix_path}"],
                ["cmake", "--build", str(out), "--parallel", jobs]):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"building the floor executor failed:\n{' '.join(cmd)}\n{proc.stdout[-8000:]}"
                               f"{proc.stderr[-4000:]}")


@functools.cache
def module() -> ModuleType:
    """The floor module (`Calls`, `FloorRunner`) over the runtime library es.cpp has loaded (once per
    process: pybind refuses to register its classes twice)."""
    import externspec as es

    package = es.cpp.cmake_dir()
    digest = hashlib.sha256(str(package).encode()).hexdigest()[:16]
    headers = sorted(Path(get_include()).rglob("*.h"))
    built = _cached(f"floor-{digest}", lambda out: _configure_and_build(package, out),
                    key_files=(Path(__file__), *sorted(p for p in SOURCE.iterdir() if p.is_file()), *headers))
    library = next(built.glob("externspec_floor*.so"))
    spec = importlib.util.spec_from_file_location("externspec_floor", library)
    assert spec is not None and spec.loader is not None
    floor = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(floor)
    return floor
