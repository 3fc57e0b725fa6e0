"""SpecBuilder: nodes and flat arrays per schema type, the default policy, and add-time errors."""

from __future__ import annotations

import json
import math

import pytest
import torch

import externspec as es
from tests.support import custom_ops as co

X = torch.arange(12.0).reshape(3, 4)
Y = torch.arange(12.0).reshape(3, 4) * -1


def node_json(builder: es.SpecBuilder, index: int = -1) -> dict:
    return json.loads(es.dumps(builder.build()))["nodes"][index]["node"]


def inputs_of(node: dict) -> dict[str, dict]:
    return {i["name"]: i["arg"] for i in node["inputs"]}


def test_every_argument_type_is_written_with_its_member_and_slots() -> None:
    b = es.SpecBuilder()
    args, kwargs = co.all_inputs_example(X, Y)
    site = b.add(co.all_inputs, args, kwargs)
    got = inputs_of(node_json(b))
    assert got["tensor"] == {"as_tensor": {"name": "arg0_1"}}
    assert got["tensors"] == {"as_tensors": [{"name": "arg0_1"}, {"name": "arg1_1"}]}
    assert got["optional_tensors"] == {"as_optional_tensors": [{"as_none": True}, {"as_tensor": {"name": "arg1_1"}}]}
    assert got["b8"] == {"as_bool": False} and got["b8s"] == {"as_bools": [True, False]}
    assert got["i64"] == {"as_int": 42} and got["i64s"] == {"as_ints": [16, 17]}
    assert got["symint"] == {"as_int": 8} and got["symints"] == {"as_ints": [8, 3]}
    assert got["f64"] == {"as_float": 3.14} and got["f64s"] == {"as_floats": [2.2, 3.3]}
    assert got["scalar"] == {"as_float": 1.25} and got["scalars"] == {"as_ints": [45, 67]}
    assert got["string"] == {"as_string": "hello"} and got["strings"] == {"as_strings": ["ab", "cde"]}
    assert got["dtype"] == {"as_scalar_type": es.ScalarType.DOUBLE}
    assert got["layout"] == {"as_layout": es.Layout.Strided}
    assert got["memory_format"] == {"as_memory_format": es.MemoryFormat.ChannelsLast}
    assert got["device"] == {"as_device": {"type": "cpu", "index": None}}
    assert got["o_tensor"] == {"as_none": True} and got["o_i64"] == {"as_none": True}
    assert got["o_dtype"] == {"as_scalar_type": es.ScalarType.LONG}
    # Arrays as AOTInductor lays them out: dynamic inputs in schema order, then outputs.
    assert site.int_args == [42, 16, 17, 8, 8, 3, 45, 67, 16, 17, 3]
    assert [id(t) for t in site.tensor_args[:-1]] == [id(X), id(X), id(Y), id(Y), id(X), id(Y)]
    assert site.tensor_args[-1] is None
    assert (site.num_int_outputs, site.num_tensor_outputs) == (0, 1)


def test_returns_size_the_output_slots() -> None:
    b = es.SpecBuilder()
    assert b.add(co.tuple_out, (X, Y)).num_tensor_outputs == 2
    assert b.add(co.list_out, (X, 3)).num_tensor_outputs == 3
    assert node_json(b)["outputs"] == [{"as_tensors": [{"name": "buf3_out"}, {"name": "buf4_out"},
                                                       {"name": "buf5_out"}]}]
    assert b.add(co.optional_out, (X, False)).num_tensor_outputs == 1
    assert node_json(b)["outputs"][1] == {"as_optional_tensor": {"as_none": True}}
    site = b.add(co.int_out, (X,))
    assert site.int_args == [33] and site.num_int_outputs == 1
    assert node_json(b)["outputs"][1] == {"as_int": 33}
    site = b.add(co.mixed_out, (X, 2))
    assert (site.int_args, site.num_tensor_outputs, site.num_int_outputs) == ([2, 5], 3, 1)
    site = b.add(co.add_into, (X, Y.clone()))
    assert node_json(b)["outputs"] == [] and site.num_tensor_outputs == 0


def test_in_place_call_site_holds_the_callers_tensors() -> None:
    t = X.clone()
    site = es.SpecBuilder().add(co.scale_, (t, 2.0))
    assert site.tensor_args[0] is t


def test_spec_is_stamped_and_marks_python_defined_ops() -> None:
    b = es.SpecBuilder()
    b.add(torch.ops.aten.add.Tensor, (X, Y))
    spec = b.build()
    assert spec.schema_version == es.SCHEMA_VERSION
    # Each call's arrays hold the node's own arguments (omit_defaults leaves a default out with its slots).
    assert spec.call_layout == es.CallLayout.NODE_ARGUMENTS
    assert spec.producer == f"externspec {es.__version__} (torch {torch.__version__})"
    assert '"call_layout":1,"producer":"externspec ' in es.dumps(spec)
    assert spec.nodes[0].node.target == "aten::add.Tensor"
    assert spec.nodes[0].node.metadata["externspec.op_schema"] == str(torch.ops.aten.add.Tensor._schema)

    @torch.library.custom_op("externspec_export_meta::twice", mutates_args=())
    def twice(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    b.add(torch.ops.externspec_export_meta.twice.default, (X,))
    assert b.build().nodes[1].node.metadata["torch_library_custom_op"] == "1"


def test_default_policy_writes_every_argument() -> None:
    b = es.SpecBuilder()
    site = b.add(co.kwonly, (X,))
    node = node_json(b)
    assert [i["name"] for i in node["inputs"]] == ["x", "p", "k", "f", "s", "dtype", "mode"]
    assert [i["kind"] for i in node["inputs"]] == [1, 2, 2, 2, 2, 2, 2]
    assert site.int_args == [2, 3, 4]


def test_omit_defaults_leaves_out_exactly_the_defaults() -> None:
    b = es.SpecBuilder(omit_defaults=True)
    site = b.add(co.kwonly, (X, 2), {"k": 9, "mode": "a", "dtype": torch.float64})
    assert [i["name"] for i in node_json(b)["inputs"]] == ["x", "k", "dtype"]
    assert site.int_args == [9]  # p and s were defaults: no slots either
    # Enum defaults compare through the c10 table: int64 is the default, int32 is not.
    b.add(co.enum_defaults, (X, torch.int64))
    assert [i["name"] for i in node_json(b)["inputs"]] == ["x"]
    b.add(co.enum_defaults, (X, torch.int32))
    assert inputs_of(node_json(b))["dtype"] == {"as_scalar_type": es.ScalarType.INT}
    # A bool is not the int default 1 of a Scalar, nor 1.0 the int 1.
    b.add(torch.ops.aten.add.Tensor, (X, Y), {"alpha": True})
    assert inputs_of(node_json(b))["alpha"] == {"as_bool": True}
    b.add(torch.ops.aten.add.Tensor, (X, Y), {"alpha": 1.0})
    assert inputs_of(node_json(b))["alpha"] == {"as_float": 1.0}
    b.add(torch.ops.aten.add.Tensor, (X, Y), {"alpha": 1})
    assert "alpha" not in inputs_of(node_json(b))


def test_enum_defaults_are_written_in_the_file_numbering() -> None:
    b = es.SpecBuilder()
    b.add(co.enum_defaults, (X,))
    got = inputs_of(node_json(b))
    # c10 reports `long` as 4, which would be INT in the file; the file says LONG (5).
    assert got["dtype"] == {"as_scalar_type": es.ScalarType.LONG}
    assert got["layout"] == {"as_layout": es.Layout.Strided}
    assert got["memory_format"] == {"as_memory_format": es.MemoryFormat.ContiguousFormat}


def test_scalars_bool_int_float_complex() -> None:
    b = es.SpecBuilder()
    site = b.add(co.scalars, (X, True, [True, False]), {"z": 2 + 3j})
    got = inputs_of(node_json(b))
    assert got["s"] == {"as_bool": True} and got["ss"] == {"as_bools": [True, False]}
    assert got["z"] == {"as_complex": {"real": 2.0, "imag": 3.0}}
    assert site.int_args == []
    site = b.add(co.scalars, (X, 7, [1, 2]), {"z": 0.5})
    assert site.int_args == [7, 1, 2]
    site = b.add(co.scalars, (X, 0.5, [0.25, 1.5]))
    assert inputs_of(node_json(b))["ss"] == {"as_floats": [0.25, 1.5]} and site.int_args == []


def test_non_finite_floats_are_written_as_strings() -> None:
    b = es.SpecBuilder()
    b.add(co.floats, (X, math.inf, math.nan, [-math.inf, 1.0]))
    text = es.dumps(b.build())
    assert '"as_float":"Infinity"' in text and '"as_float":"NaN"' in text
    assert '"as_floats":["-Infinity",1.0]' in text
    back = es.loads(text, es.ExternKernelNodes)
    assert math.isnan(back.nodes[0].node.inputs[2].arg.as_float)


def test_wrapped_numbers_take_a_tensor_slot() -> None:
    b = es.SpecBuilder()
    site = b.add(torch.ops.aten.add.Tensor, (X, 2.5))
    assert len(site.tensor_args) == 3
    wrapped = site.tensor_args[1]
    assert wrapped.dim() == 0 and wrapped.dtype is torch.float64 and wrapped.item() == 2.5
    assert b.build().nodes[0].node.metadata["externspec.wrapped_numbers"] == "other"


@pytest.mark.parametrize(("op", "args", "kwargs", "message"), [
    (co.generator_arg, (X, torch.Generator()), {},
     "externspec_test::generator_arg: argument `gen` of type `Generator?`: the extern-kernel ABI cannot carry"),
    (co.float_return, (X,), {}, "externspec_test::float_return: return `(unnamed)` of type `float`"),
    (co.scalars, (X, 1, [1, 2.0]), {}, "argument `ss` of type `Scalar[]`: a Scalar[] must be all ints"),
    (co.all_inputs, (X, [X], [None], False, [True], "42", [1], 1, [1], 1.0, [1.0], 1, [1], "s", ["s"],
                     torch.float32, torch.strided, torch.contiguous_format, "cpu"), {},
     "argument `i64` of type `int`: expected an int, got str '42'"),
    (co.list_out, (X, None), {}, "argument `n` of type `int`: got None for a non-optional argument"),
    (co.kwonly, (X,), {"dtype": torch.qint8}, "argument `dtype` of type `ScalarType?`: dtype torch.qint8"),
])
def test_unsupported_is_raised_at_add_naming_op_argument_type(op, args, kwargs, message) -> None:
    with pytest.raises(es.UnsupportedError) as info:
        es.SpecBuilder().add(op, args, kwargs)
    assert message in str(info.value)


def test_generator_none_is_carried() -> None:
    b = es.SpecBuilder()
    b.add(co.generator_arg, (X,))
    assert inputs_of(node_json(b))["gen"] == {"as_none": True}


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ((X, 1, 2), {}, "takes 2 positional arguments, got 3"),
    ((X,), {"nope": 1}, "unknown keyword argument `nope`"),
    ((X, 1), {"p": 1}, "argument `p` given both by position and by keyword"),
])
def test_calls_that_do_not_bind_are_call_errors(args, kwargs, message) -> None:
    with pytest.raises(es.CallError, match=message):
        es.SpecBuilder().add(co.kwonly, args, kwargs)


def test_missing_required_argument() -> None:
    with pytest.raises(es.CallError, match="missing argument `y` of type `Tensor`"):
        es.SpecBuilder().add(co.tuple_out, (X,))


def test_not_an_op_overload() -> None:
    with pytest.raises(es.UnsupportedError, match=r"expected a torch._ops.OpOverload"):
        es.SpecBuilder().add(torch.ops.aten.add, (X, Y))  # type: ignore[arg-type]


def test_list_return_without_fake_kernel_is_unsupported() -> None:
    lib = torch.library.Library("externspec_export_nofake", "DEF")
    lib.define("chunks(Tensor x) -> Tensor[]")
    lib.impl("chunks", lambda x: [x, x], "CPU")
    with pytest.raises(es.UnsupportedError, match="need a fake-tensor run to size the output slots"):
        es.SpecBuilder().add(torch.ops.externspec_export_nofake.chunks.default, (X,))


def test_ints_outside_int64_are_unsupported_not_a_crash() -> None:
    with pytest.raises(es.UnsupportedError, match=r"argument `n` of type `int`: 9223372036854775808 does not fit"):
        es.SpecBuilder().add(co.list_out, (X, 2**63))


def test_kernel_errors_name_the_node() -> None:
    b = es.SpecBuilder()
    site = b.add(torch.ops.aten.mm.default, (X, X.T))
    ex = es.ProxyExecutor(b.build())
    with pytest.raises(RuntimeError) as info:
        ex.call_function(0, site.int_args, [X, X, None])  # 3x4 @ 3x4: the kernel refuses
    assert "externspec: raised by the kernel of node 0 `buf0` (aten::mm)" in info.value.__notes__
