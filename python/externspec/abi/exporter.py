"""The exporter: one op call -> one ExternKernelNode plus the two flat argument arrays.

`SpecBuilder.add(op, args, kwargs)` binds the call to the op's FunctionSchema, writes each
argument as the Argument member its schema type takes (table in `externspec.abi`), and lays out the flat
arrays exactly as AOTInductor's generated wrapper does: tensors = dynamic tensor inputs in schema
order, then one slot per output tensor; ints = dynamic int inputs in schema order, then the op's int
return values. Where each value goes is not decided here: the node written, its arrays are filled
from its layout (`abi.layout.schema_layout`, the one both executors and `inspect` use), so the
arrays a `CallSite` holds are the ones the executors read.

Where torch 2.13 goes wrong, this module does not:
* non-finite floats are written as "Infinity"/"-Infinity"/"NaN", which externspec reads back;
* a bool bound to `Scalar` is the static `as_bool`, never an int slot;
* kwarg-only arguments with defaults are written (or, with `omit_defaults`, omitted) consistently
  with the slots they take, so the arrays never desync;
* a type the ABI cannot carry is an `UnsupportedError` naming op, argument and type, at `add` time.

Default policy: every argument is written, defaults included, so torch's reader (which fills only
what is missing) and externspec's agree. `SpecBuilder(omit_defaults=True)` leaves out arguments equal
to their schema default; the runtime fills them from the op schema it finds at load (and, thanks to
the recorded export-time schema, refuses if that default changed).

Each node records the op schema it was exported against in `metadata["externspec.op_schema"]`
(torch ignores unknown metadata) so the runtime can judge op-schema evolution; Python numbers passed
for `Tensor` arguments (wrapped numbers, which take a tensor slot) are listed in
`metadata["externspec.wrapped_numbers"]` so a runtime can restore their type-promotion semantics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import torch

from .._generated.models import (
    SCHEMA_VERSION,
    Argument,
    ArgumentKind,
    CallLayout,
    ExternKernelNode,
    ExternKernelNodes,
    NamedArgument,
    Node,
    OptionalTensorArgument,
    TensorArgument,
)
from .._version import __version__
from ..errors import CallError, UnsupportedError
from . import CUSTOM_OP_KEY, OP_SCHEMA_KEY, WRAPPED_NUMBERS_KEY, ArgType, SlotKind, arg_type, same_argument, torch_types
from .arg_writer import ArgWriter, Slots, is_int
from .layout import ArgLayout, NodeLayout, schema_layout
from .ops import SchemaFacts, schema_facts

_T = TypeVar("_T")


@dataclass
class CallSite:
    """What a compiled caller would pass for one call: `ex.call_function(site.index, site.int_args,
    site.tensor_args)` replays it. `tensor_args` holds the caller's own input tensors (not copies),
    then one `None` per output slot, which the executor fills."""

    index: int
    int_args: list[int]
    tensor_args: list[torch.Tensor | None]
    num_int_outputs: int
    num_tensor_outputs: int


def bind_call(op: torch._ops.OpOverload, args: Sequence[Any],
              kwargs: dict[str, Any]) -> list[tuple[Any, Any, ArgumentKind]]:
    """Bind positional and keyword arguments to the schema, as the dispatcher does.

    Returns (schema_arg, value, kind) per schema argument in schema order; `kind` is how the node
    records it (the IDL's ArgumentKind): POSITIONAL, or KEYWORD (given by keyword, or filled from the
    schema default)."""
    schema = op._schema
    params = schema.arguments
    positional = [a for a in params if not a.kwarg_only]
    if len(args) > len(positional):
        raise CallError(f"{op.name()}: takes {len(positional)} positional arguments, got {len(args)}")
    names = {a.name for a in params}
    unknown = sorted(set(kwargs) - names)
    if unknown:
        raise CallError(f"{op.name()}: unknown keyword argument `{unknown[0]}` (schema: {schema})")
    bound = []
    for i, a in enumerate(params):
        if i < len(args) and not a.kwarg_only:
            if a.name in kwargs:
                raise CallError(f"{op.name()}: argument `{a.name}` given both by position and by keyword")
            bound.append((a, args[i], ArgumentKind.POSITIONAL))
        elif a.name in kwargs:
            bound.append((a, kwargs[a.name], ArgumentKind.KEYWORD))
        elif a.has_default_value():
            bound.append((a, torch_types.schema_default(a, arg_type(a.real_type)), ArgumentKind.KEYWORD))
        else:
            raise CallError(f"{op.name()}: missing argument `{a.name}` of type `{arg_type(a.real_type)}`")
    return bound


def _needs_fake_run(returns: Sequence[Any]) -> bool:
    return any(arg_type(r.real_type).return_member in ("as_tensors", "as_optional_tensor", "as_int") for r in returns)


def _fake_outputs(op: torch._ops.OpOverload, args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Run the op on fake tensors to learn list-return lengths, optional returns and int returns."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils._pytree import tree_map

    try:
        with FakeTensorMode(allow_non_fake_inputs=False) as mode:
            def fake(x: Any) -> Any:
                return mode.from_tensor(x) if isinstance(x, torch.Tensor) else x

            out = op(*tree_map(fake, list(args)), **tree_map(fake, kwargs))
    except Exception as exc:
        raise UnsupportedError(
            f"{op.name()}: its returns ({', '.join(str(arg_type(r.real_type)) for r in op._schema.returns)}) "
            f"need a fake-tensor run to size the output slots, which failed: {type(exc).__name__}: {exc}"
        ) from None
    return out if len(op._schema.returns) > 1 else (out,)


def is_torch_library_custom_op(op: torch._ops.OpOverload) -> bool:
    """Ops made with `torch.library.custom_op` (torch marks them; they need Python to run)."""
    from torch._library import custom_ops

    return custom_ops._maybe_get_opdef(op) is not None


class SpecBuilder:
    """Collects op calls into an `ExternKernelNodes` spec (node i = call index i)."""

    def __init__(self, *, omit_defaults: bool = False, record_op_schema: bool = True):
        self.omit_defaults = omit_defaults
        self.record_op_schema = record_op_schema
        self._nodes: list[ExternKernelNode] = []
        self._names: dict[int, tuple[torch.Tensor, str]] = {}
        self._outputs = 0
        self._facts: dict[torch._ops.OpOverload, SchemaFacts] = {}

    def tensor_name(self, t: torch.Tensor) -> str:
        """A stable name per distinct input tensor (names are informational: slots carry values)."""
        entry = self._names.get(id(t))
        if entry is None or entry[0] is not t:
            entry = (t, f"arg{len(self._names)}_1")
            self._names[id(t)] = entry
        return entry[1]

    def add(self, op: torch._ops.OpOverload, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None,
            name: str | None = None) -> CallSite:
        """Add one call of `op`; return the call site (index and the arrays a wrapper would pass)."""
        if not isinstance(op, torch._ops.OpOverload):
            raise UnsupportedError(f"{op!r}: expected a torch._ops.OpOverload (e.g. torch.ops.aten.add.Tensor)")
        kwargs = dict(kwargs or {})
        op_name = op.name()
        index = len(self._nodes)
        values: dict[str, Slots] = {}  # each written argument's slot values, in element order
        inputs: list[NamedArgument] = []
        wrapped: list[str] = []
        for schema_arg, value, kind in bind_call(op, args, kwargs):
            at = arg_type(schema_arg.real_type)
            if (self.omit_defaults and schema_arg.has_default_value()
                    and self._is_default(op_name, schema_arg, at, value)):
                continue
            values[schema_arg.name] = Slots()
            writer = ArgWriter(self.tensor_name, op_name, schema_arg.name, at, values[schema_arg.name])
            argument = writer.write(value)
            if writer.wrapped:
                wrapped.append(schema_arg.name)
            inputs.append(NamedArgument(name=schema_arg.name, arg=argument, kind=kind))

        returns = op._schema.returns
        for r in returns:
            if arg_type(r.real_type).return_member is None:
                raise UnsupportedError(
                    f"{op_name}: return `{r.name or '(unnamed)'}` of type `{arg_type(r.real_type)}`: "
                    "the extern-kernel ABI cannot return this type"
                )
        fake = _fake_outputs(op, args, kwargs) if _needs_fake_run(returns) else (None,) * len(returns)
        node_name = name or f"buf{index}"
        outputs = self._outputs_of(op_name, returns, fake)

        metadata: dict[str, str] = {}
        if is_torch_library_custom_op(op):
            metadata[CUSTOM_OP_KEY] = "1"
        if self.record_op_schema:
            metadata[OP_SCHEMA_KEY] = str(op._schema)
        if wrapped:
            metadata[WRAPPED_NUMBERS_KEY] = ",".join(wrapped)
        node = Node(target=op_name, inputs=inputs, outputs=outputs, metadata=metadata)
        facts = self._facts.get(op)
        if facts is None:
            facts = self._facts[op] = schema_facts(op._schema)
        # The node records its export-time schema, which is `op`'s own: nothing to compare it with.
        layout = schema_layout(op_name, node, facts, None, layout=CallLayout.NODE_ARGUMENTS)
        int_args, tensor_args = _call_arrays(op_name, layout, node, values)
        self._nodes.append(ExternKernelNode(name=node_name, node=node))
        return CallSite(
            index=index,
            int_args=int_args,
            tensor_args=tensor_args,
            num_int_outputs=layout.int_outputs,
            num_tensor_outputs=layout.tensor_outputs,
        )

    def _is_default(self, op_name: str, schema_arg: Any, at: ArgType, value: Any) -> bool:
        """Whether `value` writes exactly as the schema default does (same member, same value)."""
        scratch = Slots()
        try:
            mine = ArgWriter(self.tensor_name, op_name, schema_arg.name, at, scratch).write(value)
            fallback = torch_types.schema_default(schema_arg, at)
            default = ArgWriter(self.tensor_name, op_name, schema_arg.name, at, Slots()).write(fallback)
        except UnsupportedError:
            return False
        if scratch.tensors:
            return False
        return same_argument(mine, default)

    def _outputs_of(self, op_name: str, returns: Sequence[Any], fake: Sequence[Any]) -> list[Argument]:
        """The node's outputs: a fresh name per output tensor, None for an absent optional one, an
        int return's value as the fake run gave it."""
        outputs: list[Argument] = []

        def out_name() -> TensorArgument:
            self._outputs += 1
            return TensorArgument(name=f"buf{self._outputs}_out")

        for r, value in zip(returns, fake, strict=True):
            member = arg_type(r.real_type).return_member
            if member == "as_tensor":
                outputs.append(Argument(as_tensor=out_name()))
            elif member == "as_tensors":
                outputs.append(Argument(as_tensors=[out_name() for _ in value]))
            elif member == "as_optional_tensor":
                if value is None:
                    outputs.append(Argument(as_optional_tensor=OptionalTensorArgument(as_none=True)))
                else:
                    outputs.append(Argument(as_optional_tensor=OptionalTensorArgument(as_tensor=out_name())))
            elif member == "as_int":
                if not is_int(value):
                    raise UnsupportedError(
                        f"{op_name}: int return `{r.name or '(unnamed)'}` came back as {type(value).__name__} "
                        f"{value!r} from the fake run; the ABI needs a concrete int"
                    )
                outputs.append(Argument(as_int=int(value)))
            else:  # as_none
                outputs.append(Argument(as_none=True))
        return outputs

    def build(self) -> ExternKernelNodes:
        """The spec so far, stamped with this externspec's schema version, its call layout (each call's
        arrays hold the node's own arguments: `_call_arrays` writes them from the node's layout) and
        its producer."""
        return ExternKernelNodes(nodes=list(self._nodes), schema_version=SCHEMA_VERSION,
                                 call_layout=CallLayout.NODE_ARGUMENTS, producer=producer())


def producer() -> str:
    """What a file externspec writes records as its `producer`: externspec's and torch's versions."""
    return f"externspec {__version__} (torch {torch.__version__})"


def _call_arrays(op_name: str, layout: NodeLayout, node: Node,
                 values: dict[str, Slots]) -> tuple[list[int], list[torch.Tensor | None]]:
    """The arrays a compiled caller passes for `node`: each argument's slot values in the slots its
    layout gives it, None in each output tensor slot (the executor fills them), each int return's
    value in its int-return slot (the executor checks that the op returns it)."""
    ints = [0] * (layout.int_inputs + layout.int_outputs)
    tensors: list[torch.Tensor | None] = [None] * (layout.tensor_inputs + layout.tensor_outputs)
    for placed in layout.args:
        if placed.kind == SlotKind.INT:
            ints[placed.start:placed.stop] = _fitted(op_name, placed, values[placed.name].ints)
        elif placed.kind == SlotKind.TENSOR:
            tensors[placed.start:placed.stop] = _fitted(op_name, placed, values[placed.name].tensors)
    for out, placed_out in zip(node.outputs, layout.outputs, strict=True):
        if out.type == "as_int":
            ints[placed_out.slot] = out.unwrap("as_int")
    return ints, tensors


def _fitted(op_name: str, placed: ArgLayout, mine: Sequence[_T]) -> Sequence[_T]:
    """`mine`, the values the writer recorded for one argument, checked to fill its slots exactly
    (a slice assignment of another length would silently shift every later slot)."""
    if len(mine) != placed.count:
        raise RuntimeError(f"externspec bug: {op_name}: argument `{placed.name}` wrote {len(mine)} values for its "
                           f"{placed.count} {placed.kind} slots")
    return mine
