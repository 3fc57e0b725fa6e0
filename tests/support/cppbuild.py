"""Compile small C++ programs against the headers, cached by a hash of everything that matters.

Used by the tests and benchmarks: the machine is small, so a program is compiled once and reused
until its source, the headers, the flags or the compiler change.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from externspec.cpp_include import get_include

COMPILER = os.environ.get("CXX", "g++")


def _compiler_version() -> str:
    return subprocess.run([COMPILER, "--version"], capture_output=True, text=True, check=True).stdout


def build(source: Path | Sequence[Path], cache_dir: Path, name: str, flags: Sequence[str],
          extra_deps: Iterable[Path] = ()) -> Path:
    """Compile and link `source` (one file, or the translation units of one program) with `flags`
    into `cache_dir/name-<hash>` unless that binary exists.

    The hash covers the sources, every shipped header and `.def` table, `extra_deps`, the flags and the compiler
    version. Raises RuntimeError with the compiler's output on failure.
    """
    sources = [source] if isinstance(source, Path) else list(source)
    h = hashlib.sha256()
    h.update(_compiler_version().encode())
    h.update("\0".join(flags).encode())
    # The headers and the `.def` tables they #include (messages.def words the decoder's problems).
    headers = sorted(p for p in Path(get_include()).rglob("*") if p.suffix in (".h", ".def"))
    deps = [*sources, *headers, *extra_deps]
    for dep in deps:
        h.update(str(dep.name).encode())
        h.update(dep.read_bytes())
    exe = cache_dir / f"{name}-{h.hexdigest()[:16]}"
    if exe.exists():
        return exe
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = exe.with_name(f"{exe.name}.tmp{os.getpid()}")
    cmd = [COMPILER, *[f for f in flags if not f.startswith("-l")], *map(str, sources), "-o", str(tmp),
           *[f for f in flags if f.startswith("-l")]]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        names = " ".join(map(str, sources))
        raise RuntimeError(f"compiling {names} failed:\n{' '.join(cmd)}\n{proc.stderr[-8000:]}")
    os.replace(tmp, exe)
    return exe
