"""The Python reference proxy executor: runs extern-kernel nodes from the two flat arrays.

`ProxyExecutor(spec | path)` does all the judging at load, once:
* every node's target is resolved against the op registry (`ns::op.overload` through torch.ops;
  never eval or import of spec text): an unknown op is a load-time error naming node and target;
* each node is validated against the *runtime* op schema by argument name: an unknown argument,
  a missing argument without a default, an Argument member the runtime type does not accept, or
  changed returns is a `SpecMismatchError` naming the node, the argument and both types. Inputs
  must appear in schema order, because the arrays were laid out in that order (torch 2.13 fills
  slots in JSON order and silently swaps tensors when they are not);
* when the node records the op schema it was exported against (`metadata["externspec.op_schema"]`),
  types and omitted defaults are also compared with it, so a retyped argument or a changed default
  is named with both schemas' views;
* in a torch-written file (no `schema_version`), a kwarg-only argument the file omits is laid out as
  its schema default written out, because torch 2.13's wrapper passes that default in the arrays;
  a versioned (externspec-written) file is strict: an omitted argument takes no slot;
* a per-node call plan is precomputed: static values decoded, and for each dynamic argument the
  fixed array offset it reads.

`call_function(index, int_args, tensor_args)` then checks both array lengths before reading
anything, slices the arrays into the prepared argument list, calls the op, stores each output
tensor into its slot, and checks int returns and list-return lengths against the plan.
"""

from __future__ import annotations

import contextlib
import dataclasses
import operator
import os
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import torch

from .._generated.models import Argument, ExternKernelNode, ExternKernelNodes, Node
from ..errors import CallError, ExternSpecError, SpecMismatchError, UnsupportedError
from ..wire import loads, model_or_document
from . import (
    CUSTOM_OP_KEY,
    OP_SCHEMA_KEY,
    WRAPPED_NUMBERS_KEY,
    ArgType,
    accepts,
    arg_type,
    op_policy,
    return_slots,
    same_argument,
    slot_kind,
    split_target,
    torch_types,
)
from .arg_writer import ArgWriter, Slots

# Fill kinds: what one dynamic argument reads from the arrays.
_TENSOR, _TENSORS, _OPT_TENSORS, _INT, _INTS, _WRAPPED = range(6)
# Output kinds.
_OUT_TENSOR, _OUT_TENSORS, _OUT_OPT_TENSOR, _OUT_NONE, _OUT_INT = range(5)


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
            raise LookupError(f"no op `{target}` is registered, nor any op of namespace `{ns}`: load the library "
                              f"that defines namespace `{ns}` first (AOTIRunnerOptions::op_libraries, "
                              "op_libraries=[...] in Python, or torch.ops.load_library)") from None
        raise LookupError(f"no op `{target}` is registered (load the library that defines it first)") from None
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


class _Fill(NamedTuple):
    """One dynamic argument: where it goes (position or keyword) and the array range it reads."""

    positional: bool
    key: Any  # position or keyword name
    kind: int
    start: int
    stop: int
    pattern: tuple[bool, ...] = ()  # _OPT_TENSORS: True where a tensor slot is consumed


@dataclasses.dataclass(frozen=True)
class ArgLayout:
    """Where one argument of the op schema sits in the call's arrays (docs/call-abi.md).

    `kind` is "tensor" or "int" (slots `start`..`stop` of that array), "static" (a value of the
    file, decoded at load) or "default" (omitted: the op's own default, decoded at load; no slot).
    `given` says whether the node names the argument: a torch-written file's omitted kwarg-only
    argument is laid out as its default written out (`given` False, `arg` that default), because
    torch's wrapper passes it in the arrays."""

    name: str
    kind: str
    given: bool
    arg: Argument | None  # the value read at load (None for "default")
    value: Any = None  # "static": the value the op is called with (decoded, so checked, at load)
    start: int = 0
    stop: int = 0
    read: int = -1  # how the executor reads the slots (_TENSOR ... _WRAPPED); -1 without slots
    pattern: tuple[bool, ...] = ()  # as_optional_tensors: True where an element takes a tensor slot

    @property
    def count(self) -> int:
        """The number of slots this argument takes."""
        return self.stop - self.start


class OutputSlots(NamedTuple):
    """Where return `i` goes: `kind` (_OUT_*), its first slot (in the tensor array; the int array
    for an int return) and how many tensor slots it takes."""

    kind: int
    slot: int
    tensors: int


@dataclasses.dataclass(frozen=True)
class NodeLayout:
    """How one node sits in the two flat arrays: the int array holds the dynamic int inputs then
    one slot per int return, the tensor array the dynamic tensor inputs then one slot per output
    tensor. Both executors plan from it (the C++ one by the same rules, checked by
    tests/abi/test_node_layout.py), the exporter fills a call's arrays from it and `externspec inspect`
    prints it."""

    args: tuple[ArgLayout, ...]  # every argument of the op schema, in schema order
    outputs: tuple[OutputSlots, ...]
    int_inputs: int
    tensor_inputs: int
    int_outputs: int
    tensor_outputs: int

    @property
    def static(self) -> int:
        """Arguments decoded at load (written static values and defaults)."""
        return sum(a.kind in ("static", "default") for a in self.args)


@dataclasses.dataclass
class CallPlan:
    """Everything one call needs, computed at load: `pos`/`kwargs` hold the static values."""

    op: torch._ops.OpOverload
    call: Any  # the op's C++ callable (skips OpOverload.__call__'s Python frame)
    label: str
    pos: list[Any]
    kwargs: dict[str, Any]
    fills: tuple[_Fill, ...]
    fill_names: tuple[str, ...]  # the argument each fill reads, for error messages
    num_ints: int
    num_tensors: int
    layout: NodeLayout
    single_return: bool
    single_tensor_slot: int  # the output slot when the op returns exactly one Tensor, else -1


class ProxyExecutor:
    """Loads an extern-kernel spec and runs node `index` from the flat arrays (AOTInductor's
    `call_function` convention: tensor_args = dynamic tensor inputs, then one slot per output).

    `spec` is an ExternKernelNodes, a path to its JSON file, or its JSON text (`wire.SPEC_FORMS`).
    Only dispatcher ops are callable, and not those the op policy denies (externspec.abi.op_policy:
    files, other processes, process-wide state, memory outside the call's tensors, kernels that
    crash on arguments they do not check); `allow_ops` names denied ops (`ns::name`,
    `ns::name.overload` or `ns::*`) this spec may use anyway.

    `device` is the runtime device: every `as_device` argument passes it in place of the serialized
    device, as torch's proxy executor passes its runner's device (docs/torch-compat.md, "The runtime
    device"); None passes the serialized device."""

    def __init__(self, spec: ExternKernelNodes | str | bytes | os.PathLike[str], allow_ops: Iterable[str] = (), *,
                 device: torch.device | str | None = None):
        allowed = op_policy.check_allow_ops(allow_ops)
        self.device = None if device is None else torch_types.parse_device(device)
        given, source = model_or_document(spec, ExternKernelNodes)
        spec = given if isinstance(given, ExternKernelNodes) else loads(given, ExternKernelNodes, source=source)
        self.spec = spec
        _check_unique_names(spec)
        cache = SchemaCache()
        torch_written = spec.schema_version is None
        self.plans = [_plan_node(i, n, cache, torch_written, allowed, self.device)
                      for i, n in enumerate(spec.nodes)]

    def __len__(self) -> int:
        return len(self.plans)

    def call_function(self, index: int, int_args: Sequence[int], tensor_args: list[Any]) -> None:
        """Run node `index`; store its output tensors into their slots of `tensor_args`."""
        try:
            if index < 0:  # a negative index would silently run a node counted from the end
                raise IndexError
            plan = self.plans[index]
        except (IndexError, TypeError):
            raise CallError(f"extern node index {index!r} out of range: the spec has {len(self.plans)} nodes") from None
        if len(tensor_args) != plan.num_tensors or len(int_args) != plan.num_ints or not isinstance(tensor_args, list):
            if not isinstance(tensor_args, list):
                raise CallError(f"{plan.label}: tensor_args must be a list (output tensors are stored into it), "
                                f"got {type(tensor_args).__name__}")
            layout = plan.layout
            raise CallError(
                f"{plan.label}: expected {layout.tensor_inputs} input + {layout.tensor_outputs} output tensor slots "
                f"and {layout.int_inputs} input + {layout.int_outputs} int-return slots, got {len(tensor_args)} "
                f"tensors and {len(int_args)} ints"
            )
        try:  # free when nothing is raised (3.11 zero-cost exceptions)
            pos = plan.pos[:]
            kwargs = plan.kwargs.copy() if plan.kwargs else None
            # Exact-type checks are the fast path; anything else (a subclass, a numpy int, or the
            # wrong kind) is judged by _check_elements, which raises a CallError naming the slot.
            for positional, key, kind, start, stop, pattern in plan.fills:
                if kind == _TENSOR:
                    value: Any = tensor_args[start]
                    if type(value) is not torch.Tensor:
                        _check_elements(plan, int_args, tensor_args)
                elif kind == _INT:
                    value = int_args[start]
                    if type(value) is not int:
                        _check_elements(plan, int_args, tensor_args)
                elif kind in (_TENSORS, _OPT_TENSORS):
                    items = tensor_args[start:stop]
                    for t in items:
                        if type(t) is not torch.Tensor:
                            _check_elements(plan, int_args, tensor_args)
                    if kind == _TENSORS:
                        value = items
                    else:
                        it = iter(items)
                        value = [next(it) if present else None for present in pattern]
                elif kind == _INTS:
                    value = int_args[start:stop]
                    if not isinstance(value, list):
                        value = list(value)
                    for v in value:
                        if type(v) is not int:
                            _check_elements(plan, int_args, tensor_args)
                else:  # _WRAPPED: back to a Python number, which the dispatcher wraps again
                    value = tensor_args[start]
                    if type(value) is not torch.Tensor:
                        _check_elements(plan, int_args, tensor_args)
                    value = value.item()
                if positional:
                    pos[key] = value
                else:
                    kwargs[key] = value  # type: ignore[index]
            result = plan.call(*pos, **kwargs) if kwargs is not None else plan.call(*pos)
        except Exception as exc:
            if isinstance(exc, CallError):
                raise
            # Off the fast path: name the slot whose element has the wrong kind, if that is the cause
            # (a 5000-digit int reaches the kernel as an int and fails there with a ValueError).
            wrong = _wrong_element(plan, int_args, tensor_args)
            if wrong is not None:
                raise CallError(f"{plan.label}: {wrong}") from exc
            exc.add_note(f"externspec: raised by the kernel of {plan.label}")  # the kernel's own error, as is
            raise
        slot = plan.single_tensor_slot
        if slot >= 0 and type(result) is torch.Tensor:  # the common case, without the general loop
            tensor_args[slot] = result
            return
        if plan.single_return:
            result = (result,)
        _store_outputs(plan, result, int_args, tensor_args)


def _check_unique_names(spec: ExternKernelNodes) -> None:
    """Node names are the buffers torch generated them for: a repeat means the spec was not written
    by one export, and errors naming that node would be ambiguous."""
    seen: dict[str, int] = {}
    for i, node in enumerate(spec.nodes):
        if node.name in seen:
            raise SpecMismatchError(f"nodes {seen[node.name]} and {i} are both named `{node.name}`; node names must be "
                                    "unique", node=i)
        seen[node.name] = i


def _wrong_element(plan: CallPlan, int_args: Sequence[int], tensor_args: list[Any]) -> str | None:
    """The first slot holding the wrong kind of value, or None when every element has the kind the
    plan reads. A tensor slot takes a Tensor (not a number the dispatcher would wrap); an int slot
    takes an int in int64 range (anything with __index__, not a bool or a float). The C++ binding
    (cpp/csrc/python/module.cpp) applies the same rule with the same words."""
    for (_, _, kind, start, stop, _pattern), name in zip(plan.fills, plan.fill_names, strict=True):
        for k in range(start, stop):
            if kind in (_TENSOR, _TENSORS, _OPT_TENSORS, _WRAPPED):
                t = tensor_args[k]
                if not isinstance(t, torch.Tensor):
                    return f"tensor_args[{k}] (argument `{name}`) should be a Tensor, got {type(t).__name__}"
            elif (wrong := _not_an_int64(int_args[k])) is not None:
                return f"int_args[{k}] (argument `{name}`) {wrong}"
    for i, (kind, slot, _) in enumerate(plan.layout.outputs):
        if kind == _OUT_INT and (wrong := _not_an_int64(int_args[slot])) is not None:
            return f"int_args[{slot}] (int return {i}) {wrong}"
    return None


def _not_an_int64(v: Any) -> str | None:
    try:
        i = None if isinstance(v, bool) else operator.index(v)
    except TypeError:
        i = None
    if i is None:
        return f"should be an int, got {type(v).__name__}"
    return None if -(2**63) <= i < 2**63 else "does not fit in int64"


def _check_elements(plan: CallPlan, int_args: Sequence[int], tensor_args: list[Any]) -> None:
    wrong = _wrong_element(plan, int_args, tensor_args)
    if wrong is not None:
        raise CallError(f"{plan.label}: {wrong}")


def _store_outputs(plan: CallPlan, result: Any, int_args: Sequence[int], tensor_args: list[Any]) -> None:
    for i, (kind, slot, extra) in enumerate(plan.layout.outputs):
        r = result[i]
        if kind == _OUT_TENSOR:
            if not isinstance(r, torch.Tensor):
                raise CallError(f"{plan.label}: return {i} should be a Tensor, the op returned {type(r).__name__}")
            tensor_args[slot] = r
        elif kind == _OUT_TENSORS:
            if len(r) != extra:
                raise CallError(
                    f"{plan.label}: return {i} is a list of {len(r)} tensors, but the spec has {extra} output slots")
            tensor_args[slot:slot + extra] = r
        elif kind == _OUT_OPT_TENSOR:
            if (r is None) != (extra == 0):
                raise CallError(
                    f"{plan.label}: return {i} was {'None' if extra == 0 else 'a Tensor'} at export, "
                    f"the op returned {'None' if r is None else 'a Tensor'}")
            if extra:
                tensor_args[slot] = r
        elif kind == _OUT_INT and (type(int_args[slot]) is not int or r != int_args[slot]):
            _check_elements(plan, int_args, tensor_args)
            raise CallError(
                f"{plan.label}: int return {i} is {r}, but the caller expects {int_args[slot]} "
                f"(int_args[{slot}]); the compiled code specialized on that value")


# ----------------------------------------------------------------------------------------------
# Load: validation and planning


def _label(index: int, name: str | None, target: str) -> str:
    return f"node {index} `{name}` ({target})" if name is not None else f"node {index} ({target})"


@dataclasses.dataclass(frozen=True)
class _Param:
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
    params: tuple[_Param, ...]
    position: dict[str, int]
    by_name: dict[str, _Param]
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
        params.append(_Param(a.name, at, a.kwarg_only, has_default, a.default_value if has_default else None,
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
                raise SpecMismatchError(f"{label}: metadata `{OP_SCHEMA_KEY}` is not an op schema: {exc}") from None
        return facts


def node_layout(node: Node, *, torch_written: bool, index: int = 0, name: str | None = None,
                cache: SchemaCache | None = None) -> NodeLayout:
    """How `node` sits in the arrays, by the rules both executors plan by: the op looked up, the
    node checked against its schema (not against the op policy, which decides whether it may run,
    not where its values are). `torch_written`: the node is from a file without `schema_version`,
    whose omitted kwarg-only arguments torch's wrapper passes. SpecMismatchError (naming node
    `index`, `name`) when the executors would refuse the node's layout. Pass one `cache` for the
    nodes of a document, so each op is looked up and read once."""
    label = _label(index, node.name if name is None else name, node.target)
    if cache is None:
        cache = SchemaCache()
    try:
        if node.target == "call_torchbind":
            raise SpecMismatchError(_torchbind_refusal(label))
        _, schema = _op(label, node, cache)
        return schema_layout(label, node, schema, cache.export_schema(label, node), torch_written=torch_written)
    except ExternSpecError as exc:
        exc.node = index
        raise


def schema_layout(label: str, node: Node, schema: SchemaFacts, exported: SchemaFacts | None, *,
                  torch_written: bool) -> NodeLayout:
    """`node_layout` for a caller that already holds the op's schema facts (`schema_facts`) and,
    when the node records one, its export-time schema's: the exporter lays out every call it writes
    without looking its op up again. SpecMismatchError (naming `label`) as in `node_layout`."""
    return _layout(label, node, schema, exported, _given(label, node, schema, exported), torch_written, None)


def _torchbind_refusal(label: str) -> str:
    return (f"{label}: torchbind method calls run in the C++ executor only: this executor has no torchbind objects "
            "to call them on (es.cpp.AOTIRunner runs them, with custom_objects or load_custom_objects=True)")


def _op(label: str, node: Node, cache: SchemaCache) -> tuple[torch._ops.OpOverload, SchemaFacts]:
    try:
        return cache.op(node.target)
    except ValueError as exc:  # no op, custom or not, is named so: no hint
        raise SpecMismatchError(f"{label}: {exc}") from None
    except LookupError as exc:
        hint = (" (a torch.library.custom_op: define it in Python before loading)"
                if node.metadata.get(CUSTOM_OP_KEY) == "1" else "")
        raise SpecMismatchError(f"{label}: {exc}{hint}") from None


def _plan_node(index: int, node: ExternKernelNode, cache: SchemaCache, torch_written: bool,
               allowed: tuple[str, ...], device: torch.device | None) -> CallPlan:
    """`_plan`, its errors marked with the node they are about (`ExternSpecError.node`)."""
    try:
        return _plan(_label(index, node.name, node.node.target), node.node, cache, torch_written, allowed, device)
    except ExternSpecError as exc:
        exc.node = index
        raise


def _plan(label: str, node: Node, cache: SchemaCache, torch_written: bool,
          allow_ops: tuple[str, ...], device: torch.device | None) -> CallPlan:
    """The layout, then what a call needs besides: the op policy's verdict, the static values
    decoded, and each dynamic argument's place in the op's positional or keyword arguments."""
    if node.target == "call_torchbind":
        raise SpecMismatchError(_torchbind_refusal(label))
    op, schema = _op(label, node, cache)
    qualified = f"{op._schema.name}.{op._overloadname}"
    reason = op_policy.denial(qualified, allow_ops)
    if reason is not None:
        raise SpecMismatchError(op_policy.denied_message(label, qualified, reason))
    exported = cache.export_schema(label, node)
    given = _given(label, node, schema, exported)
    _check_guards(label, qualified, schema, given)
    layout = _layout(label, node, schema, exported, given, torch_written, device)

    pos: list[Any] = []
    pos_default: list[bool] = []
    kwargs: dict[str, Any] = {}
    fills: list[_Fill] = []
    fill_names: list[str] = []
    by_keyword = False  # once an argument is omitted, later positional ones go by keyword
    for p, placed in zip(schema.params, layout.args, strict=True):
        if placed.arg is None:
            by_keyword = by_keyword or not p.kwarg_only
            continue
        positional = not p.kwarg_only and not by_keyword
        key: Any = len(pos) if positional else p.name
        value = placed.value
        is_default = False
        if placed.read >= 0:
            fills.append(_Fill(positional, key, placed.read, placed.start, placed.stop, placed.pattern))
            fill_names.append(p.name)
        else:
            # A device equal to the op's default still passes: the runtime device replaces it.
            is_default = (p.default_arg is not None and same_argument(placed.arg, p.default_arg)
                          and not (device is not None and placed.arg.type == "as_device"))
        if positional:
            pos.append(value)
            pos_default.append(is_default)
        elif not is_default:
            # Keywords cost a few µs per call: one that restates the op's own default is left out.
            kwargs[p.name] = value
    while pos_default and pos_default[-1]:  # likewise trailing positional defaults
        pos_default.pop()
        pos.pop()

    outputs = layout.outputs
    return CallPlan(
        op=op, call=op._op, label=label, pos=pos, kwargs=kwargs, fills=tuple(fills), fill_names=tuple(fill_names),
        num_ints=layout.int_inputs + layout.int_outputs, num_tensors=layout.tensor_inputs + layout.tensor_outputs,
        layout=layout, single_return=len(schema.returns) == 1,
        single_tensor_slot=outputs[0].slot if len(outputs) == 1 and outputs[0].kind == _OUT_TENSOR else -1,
    )


def _layout(label: str, node: Node, schema: SchemaFacts, exported: SchemaFacts | None,
            given: dict[str, Argument], torch_written: bool, device: torch.device | None) -> NodeLayout:
    """The layout of `node`, whose inputs by name are `given` (`_given`)."""
    exported_args = exported.by_name if exported is not None else {}
    wrapped = set(filter(None, node.metadata.get(WRAPPED_NUMBERS_KEY, "").split(",")))
    args: list[ArgLayout] = []
    n_tensors = n_ints = 0
    for p in schema.params:
        arg = given.get(p.name)
        if arg is None:
            _check_omitted(label, p, exported_args.get(p.name))
            if not (torch_written and p.kwarg_only):
                args.append(ArgLayout(p.name, "default", given=False, arg=None))
                continue
        written = arg if arg is not None else _passed_default(label, p)
        _check_member(label, p, written, exported_args.get(p.name))
        placed = _place(p, written, arg is not None, p.name in wrapped, n_tensors, n_ints)
        if placed.kind == "static":
            placed = ArgLayout(p.name, "static", placed.given, written, value=_static_value(label, p, written, device))
        args.append(placed)
        if placed.kind == "tensor":
            n_tensors = placed.stop
        elif placed.kind == "int":
            n_ints = placed.stop
    outputs, n_out_tensors, n_out_ints = _place_outputs(label, schema, exported, node, n_tensors, n_ints)
    return NodeLayout(args=tuple(args), outputs=outputs, int_inputs=n_ints, tensor_inputs=n_tensors,
                      int_outputs=n_out_ints, tensor_outputs=n_out_tensors)


def _given(label: str, node: Node, schema: SchemaFacts, exported: SchemaFacts | None) -> dict[str, Argument]:
    """The node's inputs by name, each checked to be in the runtime schema, once, in schema order."""
    exported_args = exported.by_name if exported is not None else {}
    params = schema.params
    position = schema.position
    given: dict[str, Argument] = {}
    last = -1
    for named in node.inputs:
        name = named.name
        if name in given:
            raise SpecMismatchError(f"{label}: argument `{name}` is given twice")
        if name not in position:
            was = f" (type `{exported_args[name].at}` at export)" if name in exported_args else ""
            raise SpecMismatchError(
                f"{label}: argument `{name}` ({named.arg.type}){was} is not in the runtime op schema "
                f"`{schema.text}`; it was removed or renamed")
        if position[name] < last:
            raise SpecMismatchError(
                f"{label}: argument `{name}` comes after `{params[last].name}` in the spec but before it in "
                f"the op schema; the flat arrays are laid out in schema order, so this spec is ambiguous")
        last = position[name]
        given[name] = named.arg
    return given


def _place(p: _Param, arg: Argument, given: bool, wrapped: bool, n_tensors: int, n_ints: int) -> ArgLayout:
    """Argument `p`, written as `arg`, placed after `n_tensors` tensor and `n_ints` int slots."""
    member = arg.type
    kind = slot_kind(p.at, member)
    if kind == "tensor":
        pattern: tuple[bool, ...] = ()
        if member == "as_tensor":
            read, n = (_WRAPPED if wrapped else _TENSOR), 1
        elif member == "as_tensors":
            read, n = _TENSORS, len(arg.unwrap("as_tensors"))
        else:
            pattern = tuple(item.type == "as_tensor" for item in arg.unwrap("as_optional_tensors"))
            read, n = _OPT_TENSORS, sum(pattern)
        return ArgLayout(p.name, kind, given, arg, start=n_tensors, stop=n_tensors + n, read=read, pattern=pattern)
    if kind == "int":
        if member in ("as_int", "as_sym_int"):
            read, n = _INT, 1
        else:
            read, n = _INTS, len(arg.unwrap("as_ints") if member == "as_ints" else arg.unwrap("as_sym_ints"))
        return ArgLayout(p.name, kind, given, arg, start=n_ints, stop=n_ints + n, read=read)
    return ArgLayout(p.name, kind, given, arg)


def _check_guards(label: str, qualified: str, schema: SchemaFacts, given: dict[str, Argument]) -> None:
    """Refuse static arguments the op policy knows crash the kernel (an omitted one is its default)."""
    for guard in op_policy.policy().guards:
        if not op_policy.matches(guard.op, qualified):
            continue
        if all(_static_is(given.get(name), schema.by_name.get(name), value) for name, value in guard.conditions):
            said = " and ".join(f"`{name}` is {value}" for name, value in guard.conditions)
            raise SpecMismatchError(f"{label}: refused by the executor's op policy: {said} (the kernel {guard.reason})")


def _static_is(arg: Argument | None, p: _Param | None, value: str) -> bool:
    if p is None:
        return False
    if arg is None:
        return p.has_default and repr(p.default_value) == value
    if value == "None":
        return arg.type == "as_none"
    return arg.type == "as_bool" and repr(arg.value) == value


def _check_omitted(label: str, p: _Param, exported: _Param | None) -> None:
    if not p.has_default:
        added = " (added to the op after export?)" if exported is None else ""
        raise SpecMismatchError(
            f"{label}: argument `{p.name}` of type `{p.at}` has no default in the runtime op schema and the spec "
            f"does not give it{added}")
    if exported is not None and exported.has_default:
        before, now = exported.default_value, p.default_value
        if before != now or exported.at != p.at:
            raise SpecMismatchError(
                f"{label}: argument `{p.name}` was omitted as equal to its default `{before}` "
                f"(type `{exported.at}`) at export, but the runtime default is `{now}` (type `{p.at}`)")


def _passed_default(label: str, p: _Param) -> Argument:
    """The Argument torch 2.13's wrapper passes for kwarg-only `p`, omitted from its file: the schema
    default, laid out in the arrays as a written argument (docs/torch-compat.md, "Omitted kwarg-only
    defaults")."""
    if p.default_arg is None:
        raise SpecMismatchError(
            f"{label}: kwarg-only argument `{p.name}` (type `{p.at}`) is omitted from this torch-written file, so "
            f"torch's wrapper passes its default `{p.default_value!r}` in the arrays, and that default has no "
            "layout in the extern-kernel ABI")
    return p.default_arg


def _check_member(label: str, p: _Param, arg: Argument, exported: _Param | None) -> None:
    at = p.at
    member = arg.type
    if not at.supported and member != "as_none":
        raise SpecMismatchError(
            f"{label}: argument `{p.name}` has runtime type `{at}`, which the extern-kernel ABI cannot carry")
    if accepts(at, member):
        return
    was = f"type `{exported.at}` at export, " if exported is not None else ""
    want = ", ".join([*at.members, "as_none"] if at.optional else list(at.members))
    raise SpecMismatchError(
        f"{label}: argument `{p.name}` is `{member}` in the spec ({was}runtime type `{at}` accepts {want})")


def _static_value(label: str, p: _Param, arg: Argument, device: torch.device | None) -> Any:
    """The Python value of a static argument, as the op is called with it."""
    member = arg.type
    c10_enum = member == "as_int"  # a torch-written enum default, in c10 numbering (int ones take a slot)
    try:
        if c10_enum:
            return torch_types.enum_from_c10(p.at.base, arg.unwrap("as_int"))
        return _decode_static(member, arg.value, device)
    except UnsupportedError as exc:
        what = f"as_int, c10 {p.at.base}" if c10_enum else member
        raise SpecMismatchError(f"{label}: argument `{p.name}` ({what}): {exc}") from None


def _decode_static(member: str, v: Any, device: torch.device | None) -> Any:
    if member == "as_none":
        return None
    if member in ("as_float", "as_floats", "as_bool", "as_bools", "as_string", "as_strings"):
        return list(v) if isinstance(v, list) else v
    if member == "as_scalar_type":
        return torch_types.dtype_from_scalar_type(v)
    if member == "as_layout":
        return torch_types.torch_layout(v)
    if member == "as_memory_format":
        return torch_types.torch_memory_format(v)
    if member == "as_device":
        return torch_types.runtime_device(v, device)
    if member == "as_complex":
        return complex(v.real, v.imag)
    raise UnsupportedError(f"member `{member}` cannot be an input")


_RETURN_KIND = {"as_tensor": _OUT_TENSOR, "as_tensors": _OUT_TENSORS, "as_optional_tensor": _OUT_OPT_TENSOR,
                "as_none": _OUT_NONE, "as_int": _OUT_INT}


def _place_outputs(label: str, schema: SchemaFacts, exported: SchemaFacts | None, node: Node,
                   t0: int, i0: int) -> tuple[tuple[OutputSlots, ...], int, int]:
    """Each return's slots after `t0` input tensors and `i0` input ints, with the tensor and int
    slots the returns take."""
    returns = schema.returns
    outs = node.outputs
    runtime_types = schema.returns_text
    if exported is not None and exported.returns_text != runtime_types:
        raise SpecMismatchError(
            f"{label}: the op's returns changed since export: ({exported.returns_text}) at export, "
            f"({runtime_types}) now")
    if len(outs) != len(returns):
        raise SpecMismatchError(
            f"{label}: the spec has {len(outs)} outputs ({', '.join(o.type for o in outs) or 'none'}) but the "
            f"runtime op returns ({runtime_types})")
    placed: list[OutputSlots] = []
    n_tensors = n_ints = 0
    for i, (at, out) in enumerate(zip(returns, outs, strict=True)):
        want = at.return_member
        if want is None:
            raise SpecMismatchError(f"{label}: return {i} has runtime type `{at}`, which the ABI cannot return")
        if out.type != want:
            raise SpecMismatchError(
                f"{label}: output {i} is `{out.type}` in the spec, but runtime return type `{at}` is `{want}`")
        kind = _RETURN_KIND[want]
        ints, tensors = return_slots(out)
        placed.append(OutputSlots(kind, i0 + n_ints if kind == _OUT_INT else t0 + n_tensors, tensors))
        n_tensors += tensors
        n_ints += ints
    return tuple(placed), n_tensors, n_ints
