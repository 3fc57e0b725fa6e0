"""`inspect`'s call-ABI slot counts (docs/call-abi.md) on aten ops, per schema type and member.

inspect reads them from the executors' own layout (`abi.layout.node_layout`); tests/abi/test_node_layout.py
checks that both executors consume what it prints."""

from __future__ import annotations

from typing import Any

import pytest

import externspec as es
from externspec.cli.commands.inspect import describe

T = es.TensorArgument
OUT = [es.Argument(as_tensor=T(name="out"))]


def node(target: str, inputs: dict[str, es.Argument], outputs: list[es.Argument]) -> es.Node:
    return es.Node(target=target, inputs=[es.NamedArgument(name=k, arg=v) for k, v in inputs.items()],
                   outputs=outputs, metadata={})


def described(n: es.Node, *, torch_written: bool = False,
              calls: tuple[tuple[int, int, int], ...] | None = None) -> dict[str, Any]:
    """inspect's JSON for `n`, alone in an extern-kernel file (torch-written: without schema_version),
    with its package wrapper's `calls` (node, num_ints, num_tensors)."""
    spec = es.ExternKernelNodes(nodes=[es.ExternKernelNode(name="buf0", node=n)],
                                schema_version=None if torch_written else es.SCHEMA_VERSION)
    (entry,) = describe("spec.json", spec, call_lengths=calls)["nodes"]
    return entry


def counts(n: es.Node, *, torch_written: bool = False,
           calls: tuple[tuple[int, int, int], ...] | None = None) -> tuple[tuple[int, ...], list[str]]:
    entry = described(n, torch_written=torch_written, calls=calls)
    s = entry["slots"]
    assert s is not None, entry["slots_refused"]
    return ((s["static"], s["int_inputs"], s["tensor_inputs"], s["int_outputs"], s["tensor_outputs"]),
            [f"{a['slots']['count']} {a['slots']['kind']}" for a in entry["inputs"]])


@pytest.mark.parametrize(("alpha", "expected"), [
    (es.Argument(as_int=2), ((0, 1, 2, 0, 1), ["1 tensor", "1 tensor", "1 int"])),  # int Scalar: dynamic
    (es.Argument(as_float=0.5), ((1, 0, 2, 0, 1), ["1 tensor", "1 tensor", "0 static"])),  # float Scalar: static
])
def test_scalar_is_dynamic_only_when_int(alpha, expected):
    n = node("aten::add.Tensor", {"self": es.Argument(as_tensor=T(name="a")),
                                  "other": es.Argument(as_tensor=T(name="b")), "alpha": alpha}, OUT)
    assert counts(n) == expected


def test_optional_tensor_list_counts_only_present_tensors():
    indices = es.Argument(as_optional_tensors=[es.OptionalTensorArgument(as_none=True),
                                               es.OptionalTensorArgument(as_tensor=T(name="i"))])
    n = node("aten::index_put", {"self": es.Argument(as_tensor=T(name="a")), "indices": indices,
                                 "values": es.Argument(as_tensor=T(name="v")),
                                 "accumulate": es.Argument(as_bool=False)}, OUT)
    assert counts(n) == ((1, 0, 3, 0, 1), ["1 tensor", "1 tensor", "1 tensor", "0 static"])


def test_enums_are_static_and_omitted_defaults_take_no_slot():
    # sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)
    n = node("torch.ops.aten.sum.dim_IntList", {"self": es.Argument(as_tensor=T(name="a")),
                                                "dim": es.Argument(as_ints=[0, 1, 2]),
                                                "dtype": es.Argument(as_scalar_type=es.ScalarType.LONG)}, OUT)
    assert counts(n) == ((2, 3, 1, 0, 1), ["1 tensor", "3 int", "0 static"])  # keepdim: default, static


def test_returns_int_and_tensor_list():
    size = node("aten::size.int", {"self": es.Argument(as_tensor=T(name="a")), "dim": es.Argument(as_int=0)},
                [es.Argument(as_int=4)])
    assert counts(size)[0] == (0, 1, 1, 1, 0)
    split = node("aten::split.Tensor", {"self": es.Argument(as_tensor=T(name="a")),
                                        "split_size": es.Argument(as_int=2)},
                 [es.Argument(as_tensors=[T(name="o0"), T(name="o1"), T(name="o2")])])
    assert counts(split)[0] == (1, 1, 1, 0, 3)  # dim=0 defaulted


INDEX_ADD = node("aten::index_add", {"self": es.Argument(as_tensor=T(name="a")), "dim": es.Argument(as_int=0),
                                     "index": es.Argument(as_tensor=T(name="i")),
                                     "source": es.Argument(as_tensor=T(name="s"))}, OUT)


def test_torch_written_omitted_kwarg_only_default_takes_its_slot():
    """index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1): torch 2.11 to
    2.14's wrapper passes the omitted `alpha` in the int array (2 int slots), 2.15's does not (1, as the
    same node in a versioned file). The wrapper's call decides which; without it the node is undecided
    and shows both (issue 44: inspect printed 2 for a 2.15 package)."""
    passed = ((0, 2, 4),)  # the wrapper's call: node 0, 2 ints, 4 tensors
    assert counts(INDEX_ADD, torch_written=True, calls=passed)[0] == (0, 2, 3, 0, 1)
    entry = described(INDEX_ADD, torch_written=True, calls=passed)
    assert [(a["name"], a["member"], a["text"], a["slots"]) for a in entry["passed_defaults"]] == [
        ("alpha", "as_int", "1", {"kind": "int", "count": 1})]
    assert counts(INDEX_ADD, torch_written=True, calls=((0, 1, 4),))[0] == (1, 1, 3, 0, 1)
    assert described(INDEX_ADD, torch_written=True, calls=((0, 1, 4),))["passed_defaults"] == []
    undecided = described(INDEX_ADD, torch_written=True)
    assert undecided["slots"] is None
    assert {k: v["int_inputs"] for k, v in undecided["layouts"].items()} == {"NODE_ARGUMENTS": 1,
                                                                             "OMITTED_DEFAULTS_PASSED": 2}
    assert counts(INDEX_ADD)[0] == (1, 1, 3, 0, 1)
    assert described(INDEX_ADD)["passed_defaults"] == []


def test_nodes_the_executors_refuse_have_no_slots():
    unknown_op = described(node("nosuchns::op", {}, []))
    assert unknown_op["slots"] is None and "no op `nosuchns::op` is registered" in unknown_op["slots_refused"]
    torchbind = described(node("call_torchbind", {}, []))
    assert torchbind["slots"] is None and "torchbind" in torchbind["slots_refused"]
    bogus = described(node("aten::relu", {"self": es.Argument(as_tensor=T(name="a")),
                                          "bogus": es.Argument(as_int=1)}, OUT))
    assert bogus["slots"] is None and [a["slots"] for a in bogus["inputs"]] == [None, None]
    assert "argument `bogus` (as_int) is not in the runtime op schema" in bogus["slots_refused"]


def test_counts_agree_with_the_spec_builder_on_aten_ops():
    """For specs written by es.SpecBuilder (the exporter's own reading of the call ABI), inspect's
    counts equal the CallSite's arrays."""
    import torch

    x = torch.randn(4, 6)
    cases = [
        (torch.ops.aten.add.Tensor, (x, x), {"alpha": 2}),
        (torch.ops.aten.add.Tensor, (x, x), {"alpha": 0.5}),
        (torch.ops.aten.index_put.default, (x, [None, torch.tensor([0, 1])], torch.tensor(1.0)), None),
        (torch.ops.aten.sum.dim_IntList, (x, [0]), {"dtype": torch.float64}),
        (torch.ops.aten.split.Tensor, (x, 2), None),
        (torch.ops.aten.clamp.default, (x, None, 0.5), None),
        (torch.ops.aten.cat.default, ([x, x], 1), None),
        (torch.ops.aten.new_empty.default, (x, [2, 3]), {"dtype": torch.float16}),
    ]
    builder = es.SpecBuilder()
    sites = [builder.add(op, args, kwargs) for op, args, kwargs in cases]
    for site, extern in zip(sites, builder.build().nodes, strict=True):
        (_, ints, tensors, int_out, tensor_out), _ = counts(extern.node)
        assert (ints + int_out, tensors + tensor_out) == (len(site.int_args), len(site.tensor_args))
        assert (int_out, tensor_out) == (site.num_int_outputs, site.num_tensor_outputs)
