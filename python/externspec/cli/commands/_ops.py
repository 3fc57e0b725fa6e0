"""`--load OPS` of inspect and check-spec: register custom ops before reading the nodes that call them."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys


def _is_shared_library(path: str) -> bool:
    """A shared library by name or by content (an ELF or Mach-O file: `libops.so.1`, a build's
    `libops-<hash>` without a suffix)."""
    if path.endswith((".so", ".dylib", ".dll")):
        return True
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError:
        return False
    return magic in (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")


def load_ops(spec: str) -> None:
    """Register ops before inspecting: a shared library, a Python file, or a module name."""
    import torch

    if _is_shared_library(spec):
        torch.ops.load_library(spec)
    elif spec.endswith(".py") or os.sep in spec:
        module_spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(spec))[0], spec)
        if module_spec is None or module_spec.loader is None:
            raise ImportError(f"cannot load {spec}")
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        importlib.import_module(spec)


def register_ops(specs: list[str], command: str) -> bool:
    """`--load` of inspect and check-spec: load each OPS in turn; False (reported) on the first failure."""
    for spec in specs:
        try:
            load_ops(spec)
        except Exception as e:  # any failure of user code: report it, do not crash
            print(f"externspec {command}: --load {spec}: {type(e).__name__}: {e}", file=sys.stderr)
            return False
    return True
