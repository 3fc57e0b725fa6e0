"""Where the C++ headers are, and how to compile against them (pybind11-style `get_include`).

    g++ -std=c++17 $(python -m externspec.cpp_include --cflags) app.cpp            # nlohmann (default)
    g++ -std=c++17 $(python -m externspec.cpp_include --cflags simdjson) app.cpp   # adds -lsimdjson

The headers are generated from the IDL (`make generate`) and ship in the wheel under
externspec/include/externspec/.
"""

from __future__ import annotations

import sys
from pathlib import Path

BACKENDS = ("nlohmann", "simdjson")


def get_include() -> str:
    """The directory to pass with -I so that `#include <externspec/externspec.h>` resolves."""
    return str(Path(__file__).resolve().with_name("include"))


def compile_flags(backend: str = "nlohmann") -> list[str]:
    """Compiler and linker flags for a program using `backend` (nlohmann is header-only)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown C++ JSON backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    flags = ["-std=c++17", f"-I{get_include()}"]
    if backend == "simdjson":
        flags.append("-lsimdjson")
    return flags


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in ("--cflags", "--include"):
        print("usage: python -m externspec.cpp_include --include | --cflags [nlohmann|simdjson]", file=sys.stderr)
        return 2
    if args[0] == "--include":
        print(get_include())
        return 0
    backend = args[1] if len(args) > 1 else "nlohmann"
    if backend not in BACKENDS:
        print(f"python -m externspec.cpp_include: unknown C++ JSON backend {backend!r}; "
              f"expected one of {', '.join(BACKENDS)}", file=sys.stderr)
        return 2
    print(" ".join(compile_flags(backend)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
