"""A node's call plan, computed once at load: the layout (`layout.py`), then what a call needs
besides: the op policy's verdict and checks (`op_policy.py`), the static values decoded, and each
dynamic argument's place in the op's positional or keyword arguments. The Python executor
(`proxy_executor.py`) runs it; the C++ twin is cpp/csrc/executor/plan.cpp (`plan_node`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import torch

from .._generated.models import CallLayout, ExternKernelNode, Node
from ..errors import CallError, ExternSpecError, SpecMismatchError
from ..messages import message
from . import op_policy, same_argument
from .layout import FillKind, NodeLayout, OutKind, given_inputs, lay_out, node_label
from .ops import SchemaCache, node_op, torchbind_refusal

__all__ = ["CallPlan", "Fill", "plan_node"]


class Fill(NamedTuple):
    """One dynamic argument: where it goes (position or keyword) and the array range it reads."""

    positional: bool
    key: Any  # position or keyword name
    kind: FillKind
    start: int
    stop: int
    pattern: tuple[bool, ...] = ()  # FillKind OPT_TENSORS: True where a tensor slot is consumed



@dataclasses.dataclass
class CallPlan:
    """Everything one call needs, computed at load: `pos`/`kwargs` hold the static values."""

    op: torch._ops.OpOverload
    call: Any  # the op's C++ callable (skips OpOverload.__call__'s Python frame)
    label: str
    pos: list[Any]
    kwargs: dict[str, Any]
    fills: tuple[Fill, ...]
    fill_names: tuple[str, ...]  # the argument each fill reads, for error messages
    num_ints: int
    num_tensors: int
    layout: NodeLayout
    single_return: bool
    single_tensor_slot: int  # the output slot when the op returns exactly one Tensor, else -1
    # A node whose two call layouts differ while the spec's is undecided: its lengths are its
    # NODE_ARGUMENTS candidate's, and every call goes through `LayoutChoice.resolve` until one decides.
    layout_undecided: bool = False




def plan_node(index: int, node: ExternKernelNode, cache: SchemaCache, call_layout: CallLayout,
              allowed: tuple[str, ...], device: torch.device | None) -> CallPlan:
    """The call plan of node `index` laid out by `call_layout` (`_plan`), its errors marked with the
    node they are about (`ExternSpecError.node`)."""
    try:
        return _plan(index, node_label(index, node.name, node.node.target), node.node, cache, call_layout, allowed,
                     device)
    except ExternSpecError as exc:
        exc.node = index
        raise


def _plan(index: int, label: str, node: Node, cache: SchemaCache, call_layout: CallLayout,
          allow_ops: tuple[str, ...], device: torch.device | None) -> CallPlan:
    """The layout, then what a call needs besides: the op policy's verdict, the static values
    decoded, each dynamic argument's place in the op's positional or keyword arguments, and the
    op policy's checks of the call's ints where it has some."""
    if node.target == "call_torchbind":
        raise SpecMismatchError(torchbind_refusal(label))
    op, schema = node_op(label, node, cache)
    qualified = f"{op._schema.name}.{op._overloadname}"
    reason = op_policy.denial(qualified, allow_ops)
    if reason is not None:
        raise SpecMismatchError(op_policy.denied_message(label, qualified, reason))
    exported = cache.export_schema(label, node)
    given = given_inputs(label, node, schema, exported)
    op_policy.check_guards(label, qualified, schema.by_name, given)
    layout = lay_out(label, node, schema, exported, given, call_layout, device)

    pos: list[Any] = []
    pos_default: list[bool] = []
    kwargs: dict[str, Any] = {}
    fills: list[Fill] = []
    fill_names: list[str] = []
    places: dict[str, tuple[int | str | None, Any]] = {}  # argument -> (position or keyword, static value)
    by_keyword = False  # once an argument is omitted, later positional ones go by keyword
    for p, placed in zip(schema.params, layout.args, strict=True):
        if placed.arg is None:
            by_keyword = by_keyword or not p.kwarg_only
            places[p.name] = (None, p.default_value)
            continue
        positional = not p.kwarg_only and not by_keyword
        key: Any = len(pos) if positional else p.name
        value = placed.value
        is_default = False
        if placed.read is not None:
            fills.append(Fill(positional, key, placed.read, placed.start, placed.stop, placed.pattern))
            fill_names.append(p.name)
        else:
            # A device equal to the op's default still passes: the runtime device replaces it.
            is_default = (p.default_arg is not None and same_argument(placed.arg, p.default_arg)
                          and not (device is not None and placed.arg.type == "as_device"))
        places[p.name] = (key, value)
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
        op=op, call=_checked(index, label, op._op, qualified, places, len(pos), kwargs), label=label, pos=pos,
        kwargs=kwargs, fills=tuple(fills), fill_names=tuple(fill_names),
        num_ints=layout.int_inputs + layout.int_outputs, num_tensors=layout.tensor_inputs + layout.tensor_outputs,
        layout=layout, single_return=len(schema.returns) == 1,
        single_tensor_slot=outputs[0].slot if len(outputs) == 1 and outputs[0].kind == OutKind["TENSOR"] else -1,
    )


_Reader = Callable[[tuple[Any, ...], dict[str, Any]], Any]


def _reader(label: str, places: dict[str, tuple[int | str | None, Any]], name: str, num_pos: int,
            kwargs: dict[str, Any]) -> _Reader:
    """How a call's argument `name` is read from the op's positional and keyword arguments (its
    static value when the plan leaves it out as the op's default)."""
    if name not in places:
        raise SpecMismatchError(message("POLICY_CHECKS_MISSING_ARGUMENT", label=label, name=name))
    key, static = places[name]
    if isinstance(key, int) and key < num_pos:
        return lambda pos, kw: pos[key]
    if isinstance(key, str) and key in kwargs:
        return lambda pos, kw: kw[key]
    return lambda pos, kw: static


def _checked(index: int, label: str, call: Any, qualified: str, places: dict[str, tuple[int | str | None, Any]],
             num_pos: int, kwargs: dict[str, Any]) -> Any:
    """`call` (the op's callable) behind the op policy's checks of its ints (`ES_CHECK`), for the
    ops that have some; the other ops get `call` itself, so their calls do not pay for them. A value
    that breaks one is a CallError naming the node, the op and the argument, and the kernel is not
    called. `places`, `num_pos`, `kwargs`: where the plan puts each argument."""
    checks = tuple((c, _reader(label, places, c.arg, num_pos, kwargs),
                    _reader(label, places, c.tensor, num_pos, kwargs) if c.tensor else None)
                   for c in op_policy.checks(qualified))
    if not checks:
        return call

    def checked(*pos: Any, **kwargs: Any) -> Any:
        for check, read_arg, read_tensor in checks:
            value = read_arg(pos, kwargs)
            if value is None:
                continue
            tensor = read_tensor(pos, kwargs) if read_tensor is not None else None
            rank = tensor.dim() if isinstance(tensor, torch.Tensor) else 0
            problem = check.problem(list(value) if isinstance(value, (list, tuple)) else [value], rank)
            if problem is not None:
                raise CallError(op_policy.check_message(label, check, value, problem), node=index)
        return call(*pos, **kwargs)

    return checked
