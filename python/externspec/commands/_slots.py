"""Slot counts of a node under the call ABI (docs/call-abi.md), from the op's torch schema.

What the generated wrapper passes for node i: the dynamic int inputs then the int returns in one
array, the dynamic tensor inputs then one handle per output tensor in the other; everything else is
static (decoded once at load). The counts depend on the op schema *and* the node's members (a
`Tensor?` bound to None takes no slot), so `inspect` shows them next to the arguments.

torch is imported only when asked for (it costs seconds); an op that torch does not know (a custom
op whose library was not loaded: see `inspect --load`) has no counts.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from dataclasses import asdict, dataclass
from typing import Any

import externspec as es


@dataclass(frozen=True)
class ArgSlots:
    """How one schema argument is passed: `kind` is tensor, int, static, missing or unknown."""

    kind: str
    count: int = 0

    def text(self) -> str:
        if self.kind in ("tensor", "int"):
            return self.kind if self.count == 1 else f"{self.count} {self.kind}s"
        return {"static": "static", "missing": "default", "unknown": "?"}.get(self.kind, self.kind)


@dataclass(frozen=True)
class NodeSlots:
    static: int
    int_inputs: int
    tensor_inputs: int
    int_outputs: int
    tensor_outputs: int

    def text(self) -> str:
        return (f"static {self.static} · ints {self.int_inputs}+{self.int_outputs}"
                f" · tensors {self.tensor_inputs}+{self.tensor_outputs}")

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


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


def find_schema(target: str) -> Any | None:
    """The torch FunctionSchema of `ns::op[.overload]` or `torch.ops.ns.op.overload`, or None."""
    try:
        import torch
    except ImportError:
        return None
    if target.startswith("torch.ops."):
        parts = target.removeprefix("torch.ops.").split(".")
        if len(parts) != 3:
            return None
        name, overload = f"{parts[0]}::{parts[1]}", parts[2]
    elif "::" in target:
        name, _, overload = target.partition(".")
        overload = overload or ""
    else:
        return None
    ns, _, op = name.partition("::")
    try:
        packet = getattr(getattr(torch.ops, ns), op)
        return getattr(packet, overload or "default")._schema
    except Exception:  # torch raises AttributeError, RuntimeError, ... for names it does not have
        return None


def node_slots(node: es.Node) -> tuple[NodeSlots, list[ArgSlots]] | None:
    """Counts for the node and per input (in the node's order), or None when torch lacks the op."""
    schema = find_schema(node.target)
    if schema is None:
        return None
    from externspec import abi  # here: the ABI tables are read only once torch has found an op

    by_name = {a.name: a for a in schema.arguments}
    per_input = []
    static = ints = tensors = 0
    for named in node.inputs:
        schema_arg = by_name.get(named.name)
        if schema_arg is None:
            per_input.append(ArgSlots("unknown"))
            continue
        # The declared type: `.type` says `int` for ScalarType, Layout and MemoryFormat (static
        # enums), `.real_type` keeps them apart from real ints (dynamic).
        s = ArgSlots(*abi.input_slots(abi.arg_type(getattr(schema_arg, "real_type", schema_arg.type)), named.arg))
        per_input.append(s)
        static += s.kind == "static"
        ints += s.count if s.kind == "int" else 0
        tensors += s.count if s.kind == "tensor" else 0
    given = {n.name for n in node.inputs}
    static += sum(1 for a in schema.arguments if a.name not in given)  # defaults, filled at load
    int_out = tensor_out = 0
    for out in node.outputs[:len(schema.returns)]:
        i, t = abi.return_slots(out)
        int_out += i
        tensor_out += t
    return NodeSlots(static, ints, tensors, int_out, tensor_out), per_input
