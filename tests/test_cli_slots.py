"""`inspect`'s call-ABI slot counts (DESIGN.md, "Call ABI") on aten ops, per schema type and member."""

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
