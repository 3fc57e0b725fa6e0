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
* a versioned (externspec-written) file is laid out NODE_ARGUMENTS: an omitted argument takes no
  slot. A torch-written file (no `schema_version`) is laid out as the torch that compiled it did
  (`call_layout`, docs/torch-compat.md, "The call layout"): torch 2.11 to 2.14 passed an omitted
  kwarg-only argument's default in the arrays (OMITTED_DEFAULTS_PASSED), 2.15 does not
  (NODE_ARGUMENTS). "auto" plans both only for the nodes where they differ and decides from the
  wrapper's calls (`call_lengths`) at load, or else from the first call whose lengths match one of
  them; the package then keeps that layout;
* a per-node call plan is precomputed: static values decoded, and for each dynamic argument the
  fixed array offset it reads.

`call_function(index, int_args, tensor_args)` then checks both array lengths before reading
anything, slices the arrays into the prepared argument list, calls the op, stores each output
tensor into its slot, and checks int returns and list-return lengths against the plan.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Iterable, Sequence
from typing import Any

import torch

from .._generated.models import CallLayout, ExternKernelNodes
from ..errors import CallError, SpecMismatchError
from ..messages import message
from ..wire import loads, model_or_document
from . import op_policy, torch_types
from .call_layout import LayoutChoice, call_layout_option, planned_layout
from .layout import FillKind, OutKind
from .ops import SchemaCache
from .plan import CallPlan, plan_node

__all__ = ["ProxyExecutor"]

# The call path compares kinds with module globals (one dict lookup, no class attribute lookup).
_TENSOR, _WRAPPED, _TENSORS = FillKind["TENSOR"], FillKind["WRAPPED"], FillKind["TENSORS"]
_OPT_TENSORS, _INT, _INTS = FillKind["OPT_TENSORS"], FillKind["INT"], FillKind["INTS"]
_OUT_TENSOR, _OUT_TENSORS = OutKind["TENSOR"], OutKind["TENSORS"]
_OUT_OPT_TENSOR, _OUT_INT = OutKind["OPT_TENSOR"], OutKind["INT"]


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
    device"); None passes the serialized device.

    `call_layout` ("auto", "NODE_ARGUMENTS", "OMITTED_DEFAULTS_PASSED" or a `CallLayout`) says where
    a torch-written file's omitted kwarg-only defaults are; a versioned file is NODE_ARGUMENTS (the
    other is a SpecMismatchError). `call_lengths`, the (node, num_ints, num_tensors) of each call of
    the package's wrapper (`aoti.wrapper_call_lengths`), decides "auto" at load and is checked
    against the plans (a call that matches no layout of its node is a SpecMismatchError)."""

    def __init__(self, spec: ExternKernelNodes | str | bytes | os.PathLike[str], allow_ops: Iterable[str] = (), *,
                 device: torch.device | str | None = None, call_layout: CallLayout | str = "auto",
                 call_lengths: Iterable[tuple[int, int, int]] | None = None):
        allowed = op_policy.check_allow_ops(allow_ops)
        option = call_layout_option(call_layout)
        self.device = None if device is None else torch_types.parse_device(device)
        given, source = model_or_document(spec, ExternKernelNodes)
        spec = given if isinstance(given, ExternKernelNodes) else loads(given, ExternKernelNodes, source=source)
        self.spec = spec
        _check_unique_names(spec)
        cache = SchemaCache()
        choice = LayoutChoice(planned_layout(spec.schema_version, spec.call_layout, option))
        plan_as = choice.layout or CallLayout.OMITTED_DEFAULTS_PASSED
        self.plans = [plan_node(i, n, cache, plan_as, allowed, self.device) for i, n in enumerate(spec.nodes)]
        if choice.layout is None:  # "auto": the other candidate, only where the two differ
            for i, plan in enumerate(self.plans):
                if plan.layout.passed_ints:
                    other = plan_node(i, spec.nodes[i], cache, CallLayout.NODE_ARGUMENTS, allowed, self.device)
                    choice.candidates[i] = {plan_as: plan, CallLayout.NODE_ARGUMENTS: other}
        if call_lengths is not None:
            choice.decide_at_load(self.plans, call_lengths)
        self._choice = choice
        choice.apply(self.plans)

    @property
    def call_layout(self) -> CallLayout | None:
        """The layout of this spec's calls: the option, the versioned file's, or what "auto" decided
        (None: undecided, or no node where the two differ has been called yet)."""
        return self._choice.layout

    def __len__(self) -> int:
        return len(self.plans)

    def call_function(self, index: int, int_args: Sequence[int], tensor_args: list[Any]) -> None:
        """Run node `index`; store its output tensors into their slots of `tensor_args`."""
        try:
            if index < 0:  # a negative index would silently run a node counted from the end
                raise IndexError
            plan = self.plans[index]
        except (IndexError, TypeError):
            raise CallError(message("NODE_INDEX_OUT_OF_RANGE", index=repr(index), count=len(self.plans))) from None
        if (len(tensor_args) != plan.num_tensors or len(int_args) != plan.num_ints or plan.layout_undecided
                or not isinstance(tensor_args, list)):
            if not isinstance(tensor_args, list):
                raise CallError(message("TENSOR_ARGS_NOT_A_LIST", label=plan.label, type=type(tensor_args).__name__))
            # A node with two candidate layouts: the call's lengths pick one (or raise naming both).
            plan = self._choice.resolve(index, len(int_args), len(tensor_args), self.plans)
            if plan is None:
                plan = self.plans[index]
                layout = plan.layout
                raise CallError(message(
                    "CALL_LENGTHS", label=plan.label, tensor_inputs=layout.tensor_inputs,
                    tensor_outputs=layout.tensor_outputs, int_inputs=layout.int_inputs, int_outputs=layout.int_outputs,
                    num_tensors=len(tensor_args), num_ints=len(int_args)))
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
                raise CallError(wrong) from exc
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
            raise SpecMismatchError(message("NODE_NAME_REPEATED", first=seen[node.name], index=i, name=node.name),
                                    node=i)
        seen[node.name] = i


def _wrong_element(plan: CallPlan, int_args: Sequence[int], tensor_args: list[Any]) -> str | None:
    """The first slot holding the wrong kind of value, or None when every element has the kind the
    plan reads. A tensor slot takes a Tensor (not a number the dispatcher would wrap); an int slot
    takes an int in int64 range (anything with __index__, not a bool or a float). The C++ binding
    (cpp/csrc/python/module.cpp) applies the same rule with the same messages (messages.def)."""
    for (_, _, kind, start, stop, _pattern), name in zip(plan.fills, plan.fill_names, strict=True):
        owner = message("SLOT_OF_ARGUMENT", name=name)
        for k in range(start, stop):
            if kind in (_TENSOR, _TENSORS, _OPT_TENSORS, _WRAPPED):
                t = tensor_args[k]
                if not isinstance(t, torch.Tensor):
                    return message("TENSOR_SLOT_NOT_A_TENSOR", label=plan.label, slot=k, owner=owner,
                                   type=type(t).__name__)
            elif (wrong := _not_an_int64(plan.label, int_args, k, owner)) is not None:
                return wrong
    for i, (out_kind, slot, _) in enumerate(plan.layout.outputs):
        owner = message("SLOT_OF_INT_RETURN", index=i)
        if out_kind == _OUT_INT and (wrong := _not_an_int64(plan.label, int_args, slot, owner)) is not None:
            return wrong
    return None


def _not_an_int64(label: str, int_args: Sequence[int], k: int, owner: str) -> str | None:
    v = int_args[k]
    try:
        i = None if isinstance(v, bool) else operator.index(v)
    except TypeError:
        i = None
    if i is None:
        return message("INT_SLOT_NOT_AN_INT", label=label, slot=k, owner=owner, type=type(v).__name__)
    return None if -(2**63) <= i < 2**63 else message("INT_SLOT_NOT_INT64", label=label, slot=k, owner=owner)


def _check_elements(plan: CallPlan, int_args: Sequence[int], tensor_args: list[Any]) -> None:
    wrong = _wrong_element(plan, int_args, tensor_args)
    if wrong is not None:
        raise CallError(wrong)


def _store_outputs(plan: CallPlan, result: Any, int_args: Sequence[int], tensor_args: list[Any]) -> None:
    for i, (kind, slot, extra) in enumerate(plan.layout.outputs):
        r = result[i]
        if kind == _OUT_TENSOR:
            if not isinstance(r, torch.Tensor):
                raise CallError(message("RETURN_NOT_A_TENSOR", label=plan.label, index=i, type=type(r).__name__))
            tensor_args[slot] = r
        elif kind == _OUT_TENSORS:
            if len(r) != extra:
                raise CallError(message("RETURN_LIST_LENGTH", label=plan.label, index=i, count=len(r), slots=extra))
            tensor_args[slot:slot + extra] = r
        elif kind == _OUT_OPT_TENSOR:
            if (r is None) != (extra == 0):
                raise CallError(message("RETURN_NONE_CHANGED", label=plan.label, index=i,
                                        exported="None" if extra == 0 else "a Tensor",
                                        returned="None" if r is None else "a Tensor"))
            if extra:
                tensor_args[slot] = r
        elif kind == _OUT_INT and (type(int_args[slot]) is not int or r != int_args[slot]):
            _check_elements(plan, int_args, tensor_args)
            raise CallError(message("INT_RETURN_CHANGED", label=plan.label, index=i, value=r,
                                    expected=int_args[slot], slot=slot))
