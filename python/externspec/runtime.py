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

import operator
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch

from . import op_policy, torch_types
from ._generated.models import Argument, ExternKernelNode, ExternKernelNodes, Node
from .abi import CUSTOM_OP_KEY, OP_SCHEMA_KEY, WRAPPED_NUMBERS_KEY, ArgType, accepts, arg_type, same_argument, slot_kind
from .arg_writer import ArgWriter, Slots
from .errors import CallError, ExternSpecError, SpecMismatchError, UnsupportedError
from .wire import loads, model_or_document

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# Fill kinds: what one dynamic argument reads from the arrays.
_TENSOR, _TENSORS, _OPT_TENSORS, _INT, _INTS, _WRAPPED = range(6)
# Output kinds.
_OUT_TENSOR, _OUT_TENSORS, _OUT_OPT_TENSOR, _OUT_NONE, _OUT_INT = range(5)


def resolve_op(target: str) -> torch._ops.OpOverload:
    """`ns::op` or `ns::op.overload` -> the dispatcher op's OpOverload (LookupError if not registered).

    Only registry lookups: the names are checked to be identifiers (not dunders, so no attribute of
    torch.ops itself is reached) first, and the dispatcher's registry is asked before torch.ops, so
    a spec naming unregistered namespaces cannot make torch.ops create objects for them, and
    TorchScript-interpreter-only ops (`prim::*`, `aten::manual_seed`, which torch.ops also finds)
    are not reached. Nothing is imported or called."""
    ns, sep, rest = target.partition("::")
    name, _, overload = rest.partition(".")
    overload = overload or "default"
    if not sep or not all(_IDENT.match(p) and not p.startswith("__") for p in (ns, name, overload)):
        raise LookupError(f"`{target}` is not of the form ns::op or ns::op.overload")
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
        ns, sep, _ = node.target.partition("::")
        if node.target.startswith("torch.ops."):  # torch.export's spelling: torch.ops.ns.op.overload
            ns, sep = node.target.split(".")[2], "."
        if sep and ns:
            ops.add(ns)
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


@dataclass
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
    num_input_tensors: int
    num_input_ints: int
    outputs: tuple[tuple[int, int, int], ...]  # (kind, slot, count-or-int-value)
    single_return: bool
    single_tensor_slot: int  # the output slot when the op returns exactly one Tensor, else -1


class ProxyExecutor:
    """Loads an extern-kernel spec and runs node `index` from the flat arrays (AOTInductor's
    `call_function` convention: tensor_args = dynamic tensor inputs, then one slot per output).

    `spec` is an ExternKernelNodes, a path to its JSON file, or its JSON text (`wire.SPEC_FORMS`).
    Only dispatcher ops are callable, and not those the op policy denies (externspec.op_policy:
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
        cache = _Facts()
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
            raise CallError(
                f"{plan.label}: expected {plan.num_input_tensors} input + "
                f"{plan.num_tensors - plan.num_input_tensors} output tensor slots and {plan.num_input_ints} input + "
                f"{plan.num_ints - plan.num_input_ints} int-return slots, got {len(tensor_args)} tensors and "
                f"{len(int_args)} ints"
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
    (csrc/module.cpp) applies the same rule with the same words."""
    for (_, _, kind, start, stop, _pattern), name in zip(plan.fills, plan.fill_names, strict=True):
        for k in range(start, stop):
            if kind in (_TENSOR, _TENSORS, _OPT_TENSORS, _WRAPPED):
                t = tensor_args[k]
                if not isinstance(t, torch.Tensor):
                    return f"tensor_args[{k}] (argument `{name}`) should be a Tensor, got {type(t).__name__}"
            elif (wrong := _not_an_int64(int_args[k])) is not None:
                return f"int_args[{k}] (argument `{name}`) {wrong}"
    for i, (kind, slot, _) in enumerate(plan.outputs):
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
    for i, (kind, slot, extra) in enumerate(plan.outputs):
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


def _label(index: int, node: ExternKernelNode) -> str:
    return f"node {index} `{node.name}` ({node.node.target})"


@dataclass(frozen=True)
class _Param:
    """What validation needs of one schema argument, read once from torch's (slow) pybind objects."""

    name: str
    at: ArgType
    kwarg_only: bool
    has_default: bool
    default_value: Any
    default_arg: Argument | None  # the default as the Argument an exporter writes (None: not writable)


@dataclass(frozen=True)
class _SchemaFacts:
    text: str
    params: tuple[_Param, ...]
    position: dict[str, int]
    by_name: dict[str, _Param]
    returns: tuple[ArgType, ...]
    returns_text: str


def _facts(schema: Any) -> _SchemaFacts:
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
    return _SchemaFacts(
        text=str(schema), params=tuple(params), position={p.name: i for i, p in enumerate(params)},
        by_name={p.name: p for p in params}, returns=returns, returns_text=", ".join(map(str, returns)) or "()",
    )


class _Facts:
    """Per-load caches: op lookups and schema facts are shared by every node naming the same op."""

    def __init__(self) -> None:
        self.ops: dict[str, tuple[torch._ops.OpOverload, _SchemaFacts]] = {}
        self.exported: dict[str, _SchemaFacts] = {}

    def op(self, target: str) -> tuple[torch._ops.OpOverload, _SchemaFacts]:
        entry = self.ops.get(target)
        if entry is None:
            op = resolve_op(target)
            entry = self.ops[target] = (op, _facts(op._schema))
        return entry

    def export_schema(self, label: str, node: ExternKernelNode) -> _SchemaFacts | None:
        text = node.node.metadata.get(OP_SCHEMA_KEY)
        if text is None:
            return None
        facts = self.exported.get(text)
        if facts is None:
            op_policy.check_op_schema_text(label, OP_SCHEMA_KEY, text)
            try:
                facts = self.exported[text] = _facts(torch._C.parse_schema(text))
            except RuntimeError as exc:
                raise SpecMismatchError(f"{label}: metadata `{OP_SCHEMA_KEY}` is not an op schema: {exc}") from None
        return facts


def _plan_node(index: int, node: ExternKernelNode, cache: _Facts, torch_written: bool,
               allowed: tuple[str, ...], device: torch.device | None) -> CallPlan:
    """`_plan`, its errors marked with the node they are about (`ExternSpecError.node`)."""
    try:
        return _plan(index, node, cache, torch_written, allowed, device)
    except ExternSpecError as exc:
        exc.node = index
        raise


def _plan(index: int, node: ExternKernelNode, cache: _Facts, torch_written: bool,
          allow_ops: tuple[str, ...], device: torch.device | None) -> CallPlan:
    label = _label(index, node)
    target = node.node.target
    if target == "call_torchbind":
        raise SpecMismatchError(f"{label}: torchbind method calls run in the C++ executor only: this executor has "
                                "no torchbind objects to call them on (es.cpp.AOTIRunner runs them, with "
                                "custom_objects or load_custom_objects=True)")
    try:
        op, schema = cache.op(target)
    except LookupError as exc:
        hint = (" (a torch.library.custom_op: define it in Python before loading)"
                if node.node.metadata.get(CUSTOM_OP_KEY) == "1" else "")
        raise SpecMismatchError(f"{label}: {exc}{hint}") from None
    qualified = f"{op._schema.name}.{op._overloadname}"
    reason = op_policy.denial(qualified, allow_ops)
    if reason is not None:
        raise SpecMismatchError(op_policy.denied_message(label, qualified, reason))
    exported = cache.export_schema(label, node)
    exported_args = exported.by_name if exported is not None else {}

    params = schema.params
    position = schema.position
    given: dict[str, Argument] = {}
    last = -1
    for named in node.node.inputs:
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
    _check_guards(label, qualified, schema, given)

    wrapped = set(filter(None, node.node.metadata.get(WRAPPED_NUMBERS_KEY, "").split(",")))
    pos: list[Any] = []
    pos_default: list[bool] = []
    kwargs: dict[str, Any] = {}
    fills: list[_Fill] = []
    fill_names: list[str] = []
    n_tensors = n_ints = 0
    keyword_from = None  # once an argument is omitted, later positional ones go by keyword
    for i, p in enumerate(params):
        at = p.at
        positional = not p.kwarg_only and keyword_from is None
        arg = given.get(p.name)
        if arg is None:
            _check_omitted(label, p, exported_args.get(p.name))
            if torch_written and p.kwarg_only:
                arg = _passed_default(label, p)  # torch's wrapper passes it: read it like a given one
            else:
                if not p.kwarg_only and keyword_from is None:
                    keyword_from = i
                continue
        _check_member(label, p, arg, exported_args.get(p.name))
        key: Any = len(pos) if positional else p.name
        value, fill, n_tensors, n_ints = _static_or_fill(label, p, at, arg, positional, key, n_tensors, n_ints,
                                                         p.name in wrapped, device)
        # A device equal to the op's default still passes: the runtime device replaces it.
        is_default = (fill is None and p.default_arg is not None and same_argument(arg, p.default_arg)
                      and not (device is not None and arg.type == "as_device"))
        if fill is not None:
            fills.append(fill)
            fill_names.append(p.name)
        if positional:
            pos.append(value)
            pos_default.append(is_default)
        elif not is_default:
            # Keywords cost a few µs per call: one that restates the op's own default is left out.
            kwargs[p.name] = value
    while pos_default and pos_default[-1]:  # likewise trailing positional defaults
        pos_default.pop()
        pos.pop()

    outputs, n_out_tensors, out_ints = _plan_outputs(label, schema, exported, node, n_tensors, n_ints)
    return CallPlan(
        op=op, call=op._op, label=label, pos=pos, kwargs=kwargs, fills=tuple(fills), fill_names=tuple(fill_names),
        num_ints=n_ints + len(out_ints), num_tensors=n_tensors + n_out_tensors,
        num_input_tensors=n_tensors, num_input_ints=n_ints, outputs=tuple(outputs),
        single_return=len(schema.returns) == 1,
        single_tensor_slot=outputs[0][1] if len(outputs) == 1 and outputs[0][0] == _OUT_TENSOR else -1,
    )


def _check_guards(label: str, qualified: str, schema: _SchemaFacts, given: dict[str, Argument]) -> None:
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


def _static_or_fill(label: str, p: _Param, at: ArgType, arg: Argument, positional: bool, key: Any,
                    n_tensors: int, n_ints: int, wrapped: bool,
                    device: torch.device | None) -> tuple[Any, _Fill | None, int, int]:
    member = arg.type
    kind = slot_kind(at, member)
    if member == "as_int" and kind == "static":
        # torch-written enum default in c10 numbering: static, never a slot.
        try:
            return torch_types.enum_from_c10(at.base, arg.unwrap("as_int")), None, n_tensors, n_ints
        except UnsupportedError as exc:
            raise SpecMismatchError(f"{label}: argument `{p.name}` (as_int, c10 {at.base}): {exc}") from None
    if kind == "tensor":
        if member == "as_tensor":
            fill = _WRAPPED if wrapped else _TENSOR
            return None, _Fill(positional, key, fill, n_tensors, n_tensors + 1), n_tensors + 1, n_ints
        if member == "as_tensors":
            n = len(arg.unwrap("as_tensors"))
            return None, _Fill(positional, key, _TENSORS, n_tensors, n_tensors + n), n_tensors + n, n_ints
        pattern = tuple(item.type == "as_tensor" for item in arg.unwrap("as_optional_tensors"))
        n = sum(pattern)
        return None, _Fill(positional, key, _OPT_TENSORS, n_tensors, n_tensors + n, pattern), n_tensors + n, n_ints
    if kind == "int":
        if member in ("as_int", "as_sym_int"):
            return None, _Fill(positional, key, _INT, n_ints, n_ints + 1), n_tensors, n_ints + 1
        values = arg.unwrap("as_ints") if member == "as_ints" else arg.unwrap("as_sym_ints")
        n = len(values)
        return None, _Fill(positional, key, _INTS, n_ints, n_ints + n), n_tensors, n_ints + n
    try:
        return _static_value(member, arg.value, device), None, n_tensors, n_ints
    except UnsupportedError as exc:
        raise SpecMismatchError(f"{label}: argument `{p.name}` ({member}): {exc}") from None


def _static_value(member: str, v: Any, device: torch.device | None) -> Any:
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


def _plan_outputs(label: str, schema: _SchemaFacts, exported: _SchemaFacts | None, node: ExternKernelNode,
                  t0: int, i0: int) -> tuple[list[tuple[int, int, int]], int, list[int]]:
    returns = schema.returns
    outs = node.node.outputs
    runtime_types = schema.returns_text
    if exported is not None and exported.returns_text != runtime_types:
        raise SpecMismatchError(
            f"{label}: the op's returns changed since export: ({exported.returns_text}) at export, "
            f"({runtime_types}) now")
    if len(outs) != len(returns):
        raise SpecMismatchError(
            f"{label}: the spec has {len(outs)} outputs ({', '.join(o.type for o in outs) or 'none'}) but the "
            f"runtime op returns ({runtime_types})")
    plan: list[tuple[int, int, int]] = []
    n_tensors = 0
    ints: list[int] = []
    for i, (at, out) in enumerate(zip(returns, outs, strict=True)):
        want = at.return_member
        if want is None:
            raise SpecMismatchError(f"{label}: return {i} has runtime type `{at}`, which the ABI cannot return")
        if out.type != want:
            raise SpecMismatchError(
                f"{label}: output {i} is `{out.type}` in the spec, but runtime return type `{at}` is `{want}`")
        kind = _RETURN_KIND[want]
        if kind == _OUT_TENSOR:
            plan.append((kind, t0 + n_tensors, 1))
            n_tensors += 1
        elif kind == _OUT_TENSORS:
            n = len(out.unwrap("as_tensors"))
            plan.append((kind, t0 + n_tensors, n))
            n_tensors += n
        elif kind == _OUT_OPT_TENSOR:
            present = out.unwrap("as_optional_tensor").type == "as_tensor"
            plan.append((kind, t0 + n_tensors, int(present)))
            n_tensors += int(present)
        elif kind == _OUT_INT:
            plan.append((kind, i0 + len(ints), 0))
            ints.append(out.unwrap("as_int"))
        else:
            plan.append((kind, 0, 0))
    return plan, n_tensors, ints
