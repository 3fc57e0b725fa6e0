"""The one cache of what the tests compile with torch (AOTInductor packages, exported programs):
each file is built once per key, atomically (a crash leaves no half-written file) and under a file
lock (parallel test workers build it once, and none replaces it under another's reader). The
modules that define the models choose the paths, a key of what the file is made from in each."""

from __future__ import annotations

import fcntl
import os
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch


def cached(path: Path, build: Callable[[Path], None]) -> Path:
    """`path`, made by `build(tmp)` first if it is not there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f"{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
                built = Path(tmp) / path.name
                build(built)
                os.replace(built, path)
    return path


def compile_package(module: torch.nn.Module, inputs: tuple[Any, ...], out: Path, *, dynamic_shapes: Any = None,
                    inductor_configs: dict[str, Any] | None = None, strict: bool = True) -> None:
    """torch.export `module` on `inputs`, then AOTInductor-compile it into the package `out`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch's own, from inside export and compile
        ep = torch.export.export(module, inputs, dynamic_shapes=dynamic_shapes, strict=strict)
        torch._inductor.aoti_compile_and_package(ep, package_path=str(out), inductor_configs=inductor_configs)
