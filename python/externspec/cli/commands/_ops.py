"""`--load OPS` of inspect and check-spec: register custom ops before reading the nodes that call them."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence

from ...messages import message


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


Nodes = Mapping[int, tuple[str | None, object]] | Sequence[tuple[str | None, object]]


def load_advice(exc: BaseException, nodes: Nodes) -> str:
    """An executor error as the command line says it: where no library registers the op's namespace
    (`SpecMismatchError.missing_namespace`, data), the advice names `--load`, the command's own flag,
    not the Python runner's `op_libraries`; `nodes` are the spec's (name, node) pairs."""
    namespace = getattr(exc, "missing_namespace", None)
    index = getattr(exc, "node", None)
    if namespace is None or not isinstance(index, int):
        return str(exc)
    found = nodes.get(index) if isinstance(nodes, Mapping) else (nodes[index] if 0 <= index < len(nodes) else None)
    if found is None:
        return str(exc)
    name, node = found
    target = getattr(node, "target", "")
    where = f"node {index} `{name}` ({target})" if name is not None else f"node {index} ({target})"
    advice = "register them first with --load OPS (the .so library, .py file or module that defines them)"
    return f"{where}: " + message("OP_NAMESPACE_NOT_REGISTERED", target=target, namespace=namespace, advice=advice)
