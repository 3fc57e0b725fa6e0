"""`inspect`'s call-ABI slot counts (docs/call-abi.md) on aten ops, per schema type and member."""

from __future__ import annotations

import pytest

import externspec as es
from externspec.commands._slots import node_slots

T = es.TensorArgument


def node(target: str, inputs: dict[str, es.Argument], outputs: list[es.Argument]) -> es.Node:
    return es.Node(target=target, inputs=[es.NamedArgument(name=k, arg=v) for k, v in inputs.items()],
                   outputs=outputs, metadata={})


def counts(n: es.Node) -> tuple[tuple[int, int, int, int, int], list[str]]:
    result = node_slots(n)
    assert result is not None
    totals, per_input = result
    return ((totals.static, totals.int_inputs, totals.tensor_inputs, totals.int_outputs, totals.tensor_outputs),
            [s.text() for s in per_input])


OUT = [es.Argument(as_tensor=T(name="out"))]


@pytest.mark.parametrize(("alpha", "expected"), [
    (es.Argument(as_int=2), ((0, 1, 2, 0, 1), ["tensor", "tensor", "int"])),  # int Scalar: dynamic
    (es.Argument(as_float=0.5), ((1, 0, 2, 0, 1), ["tensor", "tensor", "static"])),  # float Scalar: static
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
    assert counts(n) == ((1, 0, 3, 0, 1), ["tensor", "tensor", "tensor", "static"])


def test_enums_are_static_and_omitted_defaults_take_no_slot():
    # sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)
    n = node("torch.ops.aten.sum.dim_IntList", {"self": es.Argument(as_tensor=T(name="a")),
                                                "dim": es.Argument(as_ints=[0, 1, 2]),
                                                "dtype": es.Argument(as_scalar_type=es.ScalarType.LONG)}, OUT)
    assert counts(n) == ((2, 3, 1, 0, 1), ["tensor", "3 ints", "static"])  # keepdim: default, static


def test_returns_int_and_tensor_list():
    size = node("aten::size.int", {"self": es.Argument(as_tensor=T(name="a")), "dim": es.Argument(as_int=0)},
                [es.Argument(as_int=4)])
    assert counts(size)[0] == (0, 1, 1, 1, 0)
    split = node("aten::split.Tensor", {"self": es.Argument(as_tensor=T(name="a")),
                                        "split_size": es.Argument(as_int=2)},
                 [es.Argument(as_tensors=[T(name="o0"), T(name="o1"), T(name="o2")])])
    assert counts(split)[0] == (1, 1, 1, 0, 3)  # dim=0 defaulted


def test_unknown_ops_and_arguments():
    assert node_slots(node("nosuchns::op", {}, [])) is None
    assert node_slots(node("call_torchbind", {}, [])) is None
    n = node("aten::relu", {"self": es.Argument(as_tensor=T(name="a")), "bogus": es.Argument(as_int=1)}, OUT)
    assert counts(n) == ((0, 0, 1, 0, 1), ["tensor", "?"])


@pytest.mark.slow
def test_counts_agree_with_the_python_executor_on_a_real_package():
    """inspect and the reference ProxyExecutor count the same slots for every node of a real
    AOTInductor package (the executor is what actually consumes the arrays)."""
    from externspec import runtime
    from tests.support import (
        artifact_ops,  # noqa: F401 (registers the custom ops)
        artifacts,
    )

    nodes = es.loads(artifacts.read_member(artifacts.aoti_package(), ".wrapper.json"), es.ExternKernelNodes)
    facts = runtime._Facts()
    for index, extern in enumerate(nodes.nodes):
        plan = runtime._plan(index, extern, facts, nodes.schema_version is None, (), None)
        totals, _ = counts(extern.node)
        assert totals[1:] == (plan.num_input_ints, plan.num_input_tensors, plan.num_ints - plan.num_input_ints,
                              plan.num_tensors - plan.num_input_tensors)


def test_counts_agree_with_the_spec_builder_and_the_executor_on_aten_ops():
    """For specs written by es.SpecBuilder, inspect's counts equal the CallSite's arrays and the
    reference executor's plan (three independent readings of the call ABI)."""
    import torch

    from externspec import runtime

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
    facts = runtime._Facts()
    for site, extern in zip(sites, builder.build().nodes, strict=True):
        (_, ints, tensors, int_out, tensor_out), _ = counts(extern.node)
        assert (ints + int_out, tensors + tensor_out) == (len(site.int_args), len(site.tensor_args))
        assert (int_out, tensor_out) == (site.num_int_outputs, site.num_tensor_outputs)
        plan = runtime._plan(site.index, extern, facts, False, (), None)
        assert (ints, tensors) == (plan.num_input_ints, plan.num_input_tensors)
