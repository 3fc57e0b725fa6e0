"""Op lookup: a node's target -> the dispatcher op and what its schema says (the C++ twin is
cpp/csrc/executor/ops.cpp).

Only registry lookups: a target is taken apart by `abi.split_target`'s grammar and looked up in the
dispatcher's registry; nothing is imported, evaluated or called. `SchemaCache` keeps each op's
`SchemaFacts` (its schema read once from torch's pybind objects) for every node naming it, and the
export-time schema a node records (`metadata["externspec.op_schema"]`), bounded by the op policy
before torch's parser sees it.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable
from typing import Any

import torch

from .._generated.models import Argument, Node
from ..errors import ExternSpecError, SpecMismatchError
from ..messages import message
from . import CUSTOM_OP_KEY, OP_SCHEMA_KEY, ArgType, arg_type, op_policy, split_target, torch_types
from .arg_writer import ArgWriter, Slots

__all__ = [
    "NamespaceNotRegistered",
    "Param",
    "SchemaCache",
    "SchemaFacts",
    "namespace_registered",
    "node_op",
    "op_namespaces",
    "resolve_op",
    "schema_facts",
    "torchbind_refusal",
]


class NamespaceNotRegistered(LookupError):
    """No op of the target's namespace is registered: its library was not loaded. `namespace` is
    data, so a surface (the command line's `--load`) words its own advice."""

    def __init__(self, namespace: str, message: str):
        super().__init__(message)
        self.namespace = namespace


def resolve_op(target: str) -> torch._ops.OpOverload:
    """A target (`abi.split_target`'s forms) -> the dispatcher op's OpOverload (LookupError if not
    registered).

    Only registry lookups: the names are identifiers, not dunders (split_target), so no attribute
    of torch.ops itself is reached, and the dispatcher's registry is asked before torch.ops, so a
    spec naming unregistered namespaces cannot make torch.ops create objects for them, and
    TorchScript-interpreter-only ops (`prim::*`, `aten::manual_seed`, which torch.ops also finds)
    are not reached. Nothing is imported or called."""
    try:
        ns, name, overload = split_target(target)
    except ValueError as exc:
        raise LookupError(str(exc)) from None
    try:
        torch._C._dispatch_find_schema_or_throw(f"{ns}::{name}", "" if overload == "default" else overload)
        packet = getattr(getattr(torch.ops, ns), name)
        op = getattr(packet, overload)
    except (AttributeError, RuntimeError):
        if not namespace_registered(ns):
            advice = message("LOAD_NAMESPACE_LIBRARY", namespace=ns)
            raise NamespaceNotRegistered(ns, message("OP_NAMESPACE_NOT_REGISTERED", target=target, namespace=ns,
                                                     advice=advice)) from None
        raise LookupError(message("OP_NOT_REGISTERED", target=target)) from None
    if not isinstance(op, torch._ops.OpOverload):
        raise LookupError(f"`{target}` does not name an op overload")
    return op


def namespace_registered(ns: str) -> bool:
    """Has this process registered any op of namespace `ns` with the dispatcher?"""
    prefix = f"{ns}::"
    return any(name.startswith(prefix) for name in torch._C._dispatch_get_all_op_names())


_TORCHBIND_PREFIX = "__torch__.torch.classes."


def op_namespaces(nodes: Iterable[Node]) -> dict[str, bool]:
    """The namespaces whose ops and torchbind classes `nodes` call (`ns::op` and `torch.ops.ns.op`
    targets, the classes of `as_custom_obj` arguments and `call_torchbind` objects), each with
    whether this process has registered it: any op of an op namespace, every class used of a class
    namespace. A namespace that is not registered needs its library loaded (an op library of the
    C++ runner, `torch.ops.load_library`) before a spec using it loads."""
    ops: set[str] = set()
    classes: dict[str, set[str]] = {}
    for node in nodes:
        with contextlib.suppress(ValueError):  # call_torchbind, or a malformed target: no op namespace
            ops.add(split_target(node.target).namespace)
        for named in node.inputs:
            if named.arg.type == "as_custom_obj":
                fqn = named.arg.unwrap("as_custom_obj").class_fqn
                ns, dot, name = fqn.removeprefix(_TORCHBIND_PREFIX).partition(".")
                if fqn.startswith(_TORCHBIND_PREFIX) and dot:
                    classes.setdefault(ns, set()).add(name)
    registered = {ns: namespace_registered(ns) for ns in ops}
    for ns, names in classes.items():
        registered[ns] = registered.get(ns, True) and all(_class_registered(ns, n) for n in names)
    return dict(sorted(registered.items()))


def _class_registered(ns: str, name: str) -> bool:
    try:
        torch._C._get_custom_class_python_wrapper(ns, name)
    except RuntimeError:
        return False
    return True


@dataclasses.dataclass(frozen=True)
class Param:
    """What validation needs of one schema argument, read once from torch's (slow) pybind objects."""

    name: str
    at: ArgType
    kwarg_only: bool
    has_default: bool
    default_value: Any
    default_arg: Argument | None  # the default as the Argument an exporter writes (None: not writable)


@dataclasses.dataclass(frozen=True)
class SchemaFacts:
    text: str
    params: tuple[Param, ...]
    position: dict[str, int]
    by_name: dict[str, Param]
    returns: tuple[ArgType, ...]
    returns_text: str


def schema_facts(schema: Any) -> SchemaFacts:
    """What planning needs of an op schema (a `torch.FunctionSchema`), read once."""
    params = []
    for a in schema.arguments:
        at = arg_type(a.real_type)
        has_default = a.has_default_value()
        default_arg = None
        if has_default:
            try:
                default_arg = ArgWriter(None, "", a.name, at, Slots()).write(torch_types.schema_default(a, at))
            except ExternSpecError:
                default_arg = None
        params.append(Param(a.name, at, a.kwarg_only, has_default, a.default_value if has_default else None,
                             default_arg))
    returns = tuple(arg_type(r.real_type) for r in schema.returns)
    return SchemaFacts(
        text=str(schema), params=tuple(params), position={p.name: i for i, p in enumerate(params)},
        by_name={p.name: p for p in params}, returns=returns, returns_text=", ".join(map(str, returns)) or "()",
    )


class SchemaCache:
    """Op lookups and schema facts, shared by every node naming the same op (per load, or per
    document for `node_layout`)."""

    def __init__(self) -> None:
        self.ops: dict[str, tuple[torch._ops.OpOverload, SchemaFacts]] = {}
        self.exported: dict[str, SchemaFacts] = {}

    def op(self, target: str) -> tuple[torch._ops.OpOverload, SchemaFacts]:
        """ValueError for a target of no op's form (`split_target`), LookupError for an op that is
        not registered."""
        entry = self.ops.get(target)
        if entry is None:
            split_target(target)
            op = resolve_op(target)
            entry = self.ops[target] = (op, schema_facts(op._schema))
        return entry

    def export_schema(self, label: str, node: Node) -> SchemaFacts | None:
        text = node.metadata.get(OP_SCHEMA_KEY)
        if text is None:
            return None
        facts = self.exported.get(text)
        if facts is None:
            op_policy.check_op_schema_text(label, OP_SCHEMA_KEY, text)
            try:
                facts = self.exported[text] = schema_facts(torch._C.parse_schema(text))
            except RuntimeError as exc:
                raise SpecMismatchError(message("NOT_AN_OP_SCHEMA", label=label, key=OP_SCHEMA_KEY, why=exc)) from None
        return facts



def torchbind_refusal(label: str) -> str:
    """Why this executor refuses node `label`, a torchbind method call."""
    return (f"{label}: torchbind method calls run in the C++ executor only: this executor has no torchbind objects "
            "to call them on (es.cpp.AOTIRunner runs them, with custom_objects or load_custom_objects=True)")


def node_op(label: str, node: Node, cache: SchemaCache) -> tuple[torch._ops.OpOverload, SchemaFacts]:
    """The op `node` calls and its schema facts (`cache.op`); SpecMismatchError naming `label`, with a
    hint for a custom op not defined yet and the namespace a missing library registers."""
    try:
        return cache.op(node.target)
    except ValueError as exc:  # no op, custom or not, is named so: no hint
        raise SpecMismatchError(f"{label}: {exc}") from None
    except LookupError as exc:
        hint = message("CUSTOM_OP_HINT") if node.metadata.get(CUSTOM_OP_KEY) == "1" else ""
        error = SpecMismatchError(f"{label}: {exc}{hint}")
        if isinstance(exc, NamespaceNotRegistered):
            error.missing_namespace = exc.namespace
        raise error from None


