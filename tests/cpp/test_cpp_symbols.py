"""es.cpp's libraries call no C++ standard-library function that torch's libraries also export.

torch's libraries are built with a newer GCC than the libstdc++ they run beside, and carry their
own copies of parts of it (std::filesystem: 142 functions in every release's libtorch_cpu.so, 64 in
torch 2.11's CUDA libtorch.so), exported. The dynamic linker binds a call to the first definition
in the process's lookup order, and torch's libraries come before libstdc++.so there, so a call
externspec makes to such a function runs torch's copy. torch 2.11's libtorch.so has a
`std::filesystem::remove_all` that calls `recursive_directory_iterator::__erase`, a weak symbol it
does not define and that a libstdc++ older than GCC 13's lacks: address 0. `es.cpp.AOTIRunner`
removing its extracted package (TempDir::remove, at the end of constructing a CPU runner) died
there with SIGSEGV (docs/cuda.md, "The GPU machine on the CPU"). The runtime uses POSIX calls
instead; this test keeps it so, under the torch of the environment it runs in.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import torch

import externspec as es

# Calls into torch's copies that were read and found self-contained (no weak symbol that a
# libstdc++ may lack): a throw and an exception's reference count, the same code in every copy.
# A call not listed here binds to a copy nobody has read; make it another way, or read it and add it.
REVIEWED = {
    "_ZSt28__throw_bad_array_new_lengthv",  # throws std::bad_array_new_length
    "_ZNSt15__exception_ptr13exception_ptr9_M_addrefEv",  # std::exception_ptr's reference count
    "_ZNSt15__exception_ptr13exception_ptr10_M_releaseEv",
    "_ZNSt13runtime_errorC1EOS_",  # std::runtime_error's move constructors (libtorch_python.so)
    "_ZNSt13runtime_errorC2EOS_",
}

pytestmark = pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")


def dynamic_symbols(library: Path, *, defined: bool) -> dict[str, str]:
    """The library's dynamic symbols, name -> nm's type letter: those it defines, or those it needs."""
    flag = "--defined-only" if defined else "--undefined-only"
    out = subprocess.run(["nm", "-D", flag, str(library)], check=True, capture_output=True, text=True).stdout
    return {parts[-1].split("@")[0]: parts[-2] for parts in (line.split() for line in out.splitlines()) if parts}


def loaded_libraries(part: str) -> list[Path]:
    """The shared libraries mapped into this process whose path contains `part`."""
    maps = Path("/proc/self/maps").read_text().splitlines()
    return sorted({Path(line.split()[-1]) for line in maps if part in line and ".so" in line.split()[-1]})


def test_es_cpp_needs_no_standard_library_function_torch_exports() -> None:
    binding = Path(es.cpp.extension().__file__)
    ours = [binding, *loaded_libraries("libexternspec_runtime")]
    torch_lib = Path(torch.__file__).parent / "lib"
    # Functions torch defines itself (type T), in the std namespace: not the weak (W) inline and
    # template instances every C++ object carries, which are the same code wherever they bind.
    torch_std = {name: lib.name for lib in sorted(torch_lib.glob("lib*.so"))
                 for name, kind in dynamic_symbols(lib, defined=True).items()
                 if kind == "T" and name.startswith(("_ZNSt", "_ZNKSt", "_ZSt"))}
    assert any(name.startswith("_ZNSt10filesystem") for name in torch_std), "torch exports no std::filesystem"
    needed = {name: lib.name for lib in ours for name in dynamic_symbols(lib, defined=False)}
    shared = sorted(f"{needed[name]} needs {name}, which {torch_std[name]} exports"
                    for name in needed.keys() & torch_std.keys() - REVIEWED)
    assert shared == []
    assert not [name for name in needed if name.startswith("_ZNSt10filesystem")], "std::filesystem is torch's too"
