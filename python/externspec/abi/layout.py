"""Node layout: where each argument of a node sits in the call's two flat arrays (docs/call-abi.md);
the C++ twin is cpp/csrc/executor/layout.cpp.

`node_layout` checks a node against the *runtime* op schema by argument name (an unknown argument,
a missing argument without a default, an Argument member the runtime type does not accept, or
changed returns is a `SpecMismatchError` naming the node, the argument and both types; inputs must
appear in schema order, because the arrays were laid out in that order), against the export-time
schema when the node records one, and places every argument: a slot range of the int or tensor
array, a static value decoded at load, or the op's default. In a torch-written file (no
`schema_version`) laid out OMITTED_DEFAULTS_PASSED (`CallLayout`), a kwarg-only argument the file
omits is laid out as its schema default written out, because torch 2.11 to 2.14's wrappers pass that
default in the arrays. Both executors plan from these rules, the exporter fills a call's arrays from
them and `externspec inspect` prints them.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from typing import Any, NamedTuple

import torch

from .._def_file import TORCH_DEF_DIR, entries
from .._generated.models import Argument, CallLayout, Node
from ..errors import ExternSpecError, SpecMismatchError, UnsupportedError
from ..messages import message
from . import WRAPPED_NUMBERS_KEY, SlotKind, accepts, return_slots, slot_kind, torch_types
from .ops import Param, SchemaCache, SchemaFacts, node_op, torchbind_refusal

__all__ = [
    "ArgLayout",
    "FillKind",
    "NodeLayout",
    "OutKind",
    "OutputSlots",
    "given_inputs",
    "lay_out",
    "node_label",
    "node_layout",
    "schema_layout",
]


KINDS_FILE = TORCH_DEF_DIR / "executor_kinds.def"


def _kinds(macro: str) -> dict[str, int]:
    """The Python executor's kinds of `macro` in executor_kinds.def, named as Python names enum members
    (OptTensors -> OPT_TENSORS), each valued at its entry's position (the C++ enumerator's value)."""
    found = [fields for _, m, fields in entries(KINDS_FILE) if m == macro]
    return {re.sub(r"(?<=[a-z])(?=[A-Z])", "_", f[0]).upper(): i for i, f in enumerate(found)
            if macro != "ES_FILL_KIND" or f[1] == "both"}


# What one dynamic argument reads from the arrays and what a return writes (C++: `FillKind` and
# `OutKind` in proxy_executor.h, from the same table; C++'s ScalarInts, a `Scalar[]` of ints, is INTS
# here: Python's dispatcher takes a list of ints for it).
FillKind = enum.IntEnum("FillKind", _kinds("ES_FILL_KIND"))  # type: ignore[misc]
OutKind = enum.IntEnum("OutKind", _kinds("ES_OUT_KIND"))  # type: ignore[misc]


@dataclasses.dataclass(frozen=True)
class ArgLayout:
    """Where one argument of the op schema sits in the call's arrays (docs/call-abi.md).

    `kind` is TENSOR or INT (slots `start`..`stop` of that array), STATIC (a value of the file,
    decoded at load) or DEFAULT (omitted: the op's own default, decoded at load; no slot).
    `given` says whether the node names the argument: a torch-written file's omitted kwarg-only
    argument is laid out as its default written out (`given` False, `arg` that default), because
    torch's wrapper passes it in the arrays."""

    name: str
    kind: SlotKind
    given: bool
    arg: Argument | None  # the value read at load (None for DEFAULT)
    value: Any = None  # STATIC: the value the op is called with (decoded, so checked, at load)
    start: int = 0
    stop: int = 0
    read: FillKind | None = None  # how the executor reads the slots (None without slots)
    pattern: tuple[bool, ...] = ()  # as_optional_tensors: True where an element takes a tensor slot

    @property
    def count(self) -> int:
        """The number of slots this argument takes."""
        return self.stop - self.start


class OutputSlots(NamedTuple):
    """Where return `i` goes: `kind`, its first slot (in the tensor array; the int array
    for an int return) and how many tensor slots it takes."""

    kind: OutKind
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
    def passed_ints(self) -> int:
        """The int slots of omitted kwarg-only defaults laid out as passed (OMITTED_DEFAULTS_PASSED):
        where this is 0 the node's two call layouts are one."""
        return sum(a.count for a in self.args if not a.given and a.kind == SlotKind.INT)

    @property
    def static(self) -> int:
        """Arguments decoded at load (written static values and defaults)."""
        return sum(a.kind in (SlotKind.STATIC, SlotKind.DEFAULT) for a in self.args)



def node_label(index: int, name: str | None, target: str) -> str:
    return f"node {index} `{name}` ({target})" if name is not None else f"node {index} ({target})"



def node_layout(node: Node, *, layout: CallLayout, index: int = 0, name: str | None = None,
                cache: SchemaCache | None = None) -> NodeLayout:
    """How `node` sits in the arrays, by the rules both executors plan by: the op looked up, the
    node checked against its schema (not against the op policy, which decides whether it may run,
    not where its values are), laid out by the call `layout`: NODE_ARGUMENTS (externspec's files,
    torch 2.15's wrappers) or OMITTED_DEFAULTS_PASSED (torch 2.11 to 2.14's wrappers, which pass each
    omitted kwarg-only default). SpecMismatchError (naming node
    `index`, `name`) when the executors would refuse the node's layout. Pass one `cache` for the
    nodes of a document, so each op is looked up and read once."""
    label = node_label(index, node.name if name is None else name, node.target)
    if cache is None:
        cache = SchemaCache()
    try:
        if node.target == "call_torchbind":
            raise SpecMismatchError(torchbind_refusal(label))
        _, schema = node_op(label, node, cache)
        return schema_layout(label, node, schema, cache.export_schema(label, node), layout=layout)
    except ExternSpecError as exc:
        exc.node = index
        raise


def schema_layout(label: str, node: Node, schema: SchemaFacts, exported: SchemaFacts | None, *,
                  layout: CallLayout) -> NodeLayout:
    """`node_layout` for a caller that already holds the op's schema facts (`schema_facts`) and,
    when the node records one, its export-time schema's: the exporter lays out every call it writes
    without looking its op up again. SpecMismatchError (naming `label`) as in `node_layout`."""
    return lay_out(label, node, schema, exported, given_inputs(label, node, schema, exported), layout, None)


def lay_out(label: str, node: Node, schema: SchemaFacts, exported: SchemaFacts | None,
            given: dict[str, Argument], layout: CallLayout, device: torch.device | None) -> NodeLayout:
    """The layout of `node`, whose inputs by name are `given` (`given_inputs`), under the call `layout`
    (OMITTED_DEFAULTS_PASSED: an omitted kwarg-only argument as its default written out)."""
    defaults_passed = layout == CallLayout.OMITTED_DEFAULTS_PASSED
    exported_args = exported.by_name if exported is not None else {}
    wrapped = set(filter(None, node.metadata.get(WRAPPED_NUMBERS_KEY, "").split(",")))
    args: list[ArgLayout] = []
    n_tensors = n_ints = 0
    for p in schema.params:
        arg = given.get(p.name)
        if arg is None:
            _check_omitted(label, p, exported_args.get(p.name))
            if not (defaults_passed and p.kwarg_only):
                args.append(ArgLayout(p.name, SlotKind.DEFAULT, given=False, arg=None))
                continue
        written = arg if arg is not None else _passed_default(label, p)
        _check_member(label, p, written, exported_args.get(p.name))
        placed = _place(p, written, arg is not None, p.name in wrapped, n_tensors, n_ints)
        if placed.kind == SlotKind.STATIC:
            value = _static_value(label, p, written, device)
            placed = ArgLayout(p.name, SlotKind.STATIC, placed.given, written, value=value)
        args.append(placed)
        if placed.kind == SlotKind.TENSOR:
            n_tensors = placed.stop
        elif placed.kind == SlotKind.INT:
            n_ints = placed.stop
    outputs, n_out_tensors, n_out_ints = _place_outputs(label, schema, exported, node, n_tensors, n_ints)
    return NodeLayout(args=tuple(args), outputs=outputs, int_inputs=n_ints, tensor_inputs=n_tensors,
                      int_outputs=n_out_ints, tensor_outputs=n_out_tensors)


def given_inputs(label: str, node: Node, schema: SchemaFacts, exported: SchemaFacts | None) -> dict[str, Argument]:
    """The node's inputs by name, each checked to be in the runtime schema, once, in schema order."""
    exported_args = exported.by_name if exported is not None else {}
    params = schema.params
    position = schema.position
    given: dict[str, Argument] = {}
    last = -1
    for named in node.inputs:
        name = named.name
        if name in given:
            raise SpecMismatchError(message("ARGUMENT_GIVEN_TWICE", label=label, name=name))
        if name not in position:
            was = message("TYPE_AT_EXPORT", type=exported_args[name].at) if name in exported_args else ""
            raise SpecMismatchError(message("ARGUMENT_NOT_IN_SCHEMA", label=label, name=name, member=named.arg.type,
                                            was=was, schema=schema.text))
        if position[name] < last:
            raise SpecMismatchError(message("ARGUMENT_OUT_OF_ORDER", label=label, name=name, before=params[last].name))
        last = position[name]
        given[name] = named.arg
    return given


def _place(p: Param, arg: Argument, given: bool, wrapped: bool, n_tensors: int, n_ints: int) -> ArgLayout:
    """Argument `p`, written as `arg`, placed after `n_tensors` tensor and `n_ints` int slots."""
    member = arg.type
    kind = slot_kind(p.at, member)
    if kind == SlotKind.TENSOR:
        pattern: tuple[bool, ...] = ()
        if member == "as_tensor":
            read, n = (FillKind["WRAPPED"] if wrapped else FillKind["TENSOR"]), 1
        elif member == "as_tensors":
            read, n = FillKind["TENSORS"], len(arg.unwrap("as_tensors"))
        else:
            pattern = tuple(item.type == "as_tensor" for item in arg.unwrap("as_optional_tensors"))
            read, n = FillKind["OPT_TENSORS"], sum(pattern)
        return ArgLayout(p.name, kind, given, arg, start=n_tensors, stop=n_tensors + n, read=read, pattern=pattern)
    if kind == SlotKind.INT:
        if member in ("as_int", "as_sym_int"):
            read, n = FillKind["INT"], 1
        else:
            ints = arg.unwrap("as_ints") if member == "as_ints" else arg.unwrap("as_sym_ints")
            read, n = FillKind["INTS"], len(ints)
        return ArgLayout(p.name, kind, given, arg, start=n_ints, stop=n_ints + n, read=read)
    return ArgLayout(p.name, kind, given, arg)


def _check_omitted(label: str, p: Param, exported: Param | None) -> None:
    if not p.has_default:
        added = " (added to the op after export?)" if exported is None else ""
        raise SpecMismatchError(message("ARGUMENT_WITHOUT_DEFAULT", label=label, name=p.name, type=p.at, added=added))
    if exported is not None and exported.has_default:
        before, now = exported.default_value, p.default_value
        if before != now or exported.at != p.at:
            raise SpecMismatchError(message("DEFAULT_CHANGED", label=label, name=p.name, before=before,
                                            before_type=exported.at, now=now, now_type=p.at))


def _passed_default(label: str, p: Param) -> Argument:
    """The Argument torch 2.11 to 2.14's wrappers pass for kwarg-only `p`, omitted from its file: the schema
    default, laid out in the arrays as a written argument (docs/torch-compat.md, "Omitted kwarg-only
    defaults")."""
    if p.default_arg is None:
        raise SpecMismatchError(
            f"{label}: kwarg-only argument `{p.name}` (type `{p.at}`) is omitted from this torch-written file, so "
            f"torch's wrapper passes its default `{p.default_value!r}` in the arrays, and that default has no "
            "layout in the extern-kernel ABI")
    return p.default_arg


def _check_member(label: str, p: Param, arg: Argument, exported: Param | None) -> None:
    at = p.at
    member = arg.type
    if not at.supported and member != "as_none":
        raise SpecMismatchError(message("TYPE_NOT_CARRIED", label=label, name=p.name, type=at))
    if accepts(at, member):
        return
    was = message("TYPE_WAS_AT_EXPORT", type=exported.at) if exported is not None else ""
    want = ", ".join([*at.members, "as_none"] if at.optional else list(at.members))
    raise SpecMismatchError(message("MEMBER_NOT_ACCEPTED", label=label, name=p.name, member=member, was=was, type=at,
                                    accepted=want))


def _static_value(label: str, p: Param, arg: Argument, device: torch.device | None) -> Any:
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
    raise UnsupportedError(message("MEMBER_NOT_AN_INPUT", member=member))


_RETURN_KIND = {"as_tensor": OutKind["TENSOR"], "as_tensors": OutKind["TENSORS"],
                "as_optional_tensor": OutKind["OPT_TENSOR"], "as_none": OutKind["NONE"], "as_int": OutKind["INT"]}


def _place_outputs(label: str, schema: SchemaFacts, exported: SchemaFacts | None, node: Node,
                   t0: int, i0: int) -> tuple[tuple[OutputSlots, ...], int, int]:
    """Each return's slots after `t0` input tensors and `i0` input ints, with the tensor and int
    slots the returns take."""
    returns = schema.returns
    outs = node.outputs
    runtime_types = schema.returns_text
    if exported is not None and exported.returns_text != runtime_types:
        raise SpecMismatchError(message("RETURNS_CHANGED", label=label, exported=exported.returns_text,
                                        now=runtime_types))
    if len(outs) != len(returns):
        raise SpecMismatchError(message("OUTPUTS_COUNT", label=label, count=len(outs),
                                        members=", ".join(o.type for o in outs) or "none", returns=runtime_types))
    placed: list[OutputSlots] = []
    n_tensors = n_ints = 0
    for i, (at, out) in enumerate(zip(returns, outs, strict=True)):
        want = at.return_member
        if want is None:
            raise SpecMismatchError(message("RETURN_NOT_CARRIED", label=label, index=i, type=at))
        if out.type != want:
            raise SpecMismatchError(message("OUTPUT_MEMBER", label=label, index=i, member=out.type, type=at, want=want))
        kind = _RETURN_KIND[want]
        ints, tensors = return_slots(out)
        placed.append(OutputSlots(kind, i0 + n_ints if kind == OutKind["INT"] else t0 + n_tensors, tensors))
        n_tensors += tensors
        n_ints += ints
    return tuple(placed), n_tensors, n_ints
