"""Where the C++ headers and packages are, and how to build against them (pybind11's convention).

    g++ $(python -m externspec.cpp_include --cflags) app.cpp                  # nlohmann (default)
    g++ $(python -m externspec.cpp_include --cflags simdjson) app.cpp \
        $(python -m externspec.cpp_include --libs simdjson)                    # libraries after the sources
    cmake -S . -B build -Dexternspec_DIR="$(python -m externspec.cpp_include --cmake-dir)"
    PKG_CONFIG_PATH="$(python -m externspec.cpp_include --pkgconfig-dir)" pkg-config --cflags externspec

The headers are generated from the IDL (`make generate`) and ship in the wheel under
externspec/include/externspec/. The CMake package (`find_package(externspec CONFIG)`) and the
pkg-config file are made by the wheel build (CMakeLists.txt), so they exist in an installed wheel,
not in a source checkout.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ._def_file import INCLUDE_DIR

BACKENDS = ("nlohmann", "simdjson")
_PACKAGE = Path(__file__).resolve().parent


def get_include() -> str:
    """The directory to pass with -I so that `#include <externspec/externspec.h>` resolves."""
    return str(INCLUDE_DIR)


def _check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise ValueError(f"unknown C++ JSON backend {backend!r}; expected one of {', '.join(BACKENDS)}")


def compile_flags(backend: str = "nlohmann") -> list[str]:
    """Compiler flags for a program using `backend` (both backends need the same ones)."""
    _check_backend(backend)
    return ["-std=c++17", f"-I{get_include()}"]


def link_flags(backend: str = "nlohmann") -> list[str]:
    """Linker flags for `backend`, to follow the sources on the command line (nlohmann needs none)."""
    _check_backend(backend)
    return ["-lsimdjson"] if backend == "simdjson" else []


def _installed_dir(relative: str, what: str) -> str:
    path = _PACKAGE / relative
    if not path.is_dir():
        raise FileNotFoundError(
            f"no {what} at {path}: it is installed by the wheel build (`pip install externspec`, or "
            "`pip wheel .` in a source checkout); an editable install of a checkout has none")
    return str(path)


def get_cmake_dir() -> str:
    """The installed wheel's directory of externspecConfig.cmake, for `-Dexternspec_DIR=` or
    CMAKE_PREFIX_PATH (pybind11's name; `es.cpp.runtime_cmake_dir()` is the package of the runtime
    library es.cpp has loaded, which in a source checkout is its build tree)."""
    return _installed_dir("share/cmake/externspec", "CMake package")


def get_pkgconfig_dir() -> str:
    """The directory of externspec.pc (the header-only decoder), for PKG_CONFIG_PATH."""
    return _installed_dir("share/pkgconfig", "pkg-config file")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m externspec.cpp_include",
                                     description="Print what a C++ build needs to use externspec.")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--include", action="store_true", help="the include directory")
    what.add_argument("--cflags", action="store_true", help="compiler flags")
    what.add_argument("--libs", action="store_true", help="linker flags (after the sources)")
    what.add_argument("--cmake-dir", action="store_true", help="the CMake package directory (externspec_DIR)")
    what.add_argument("--pkgconfig-dir", action="store_true", help="the directory of externspec.pc")
    parser.add_argument("backend", nargs="?", choices=BACKENDS, default="nlohmann",
                        help="the JSON backend, for --cflags and --libs (default: nlohmann)")
    args = parser.parse_args(argv)
    try:
        if args.include:
            print(get_include())
        elif args.cflags:
            print(" ".join(compile_flags(args.backend)))
        elif args.libs:
            print(" ".join(link_flags(args.backend)))
        elif args.cmake_dir:
            print(get_cmake_dir())
        else:
            print(get_pkgconfig_dir())
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
