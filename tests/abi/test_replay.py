"""Both executors (the `executor` fixture: es.ProxyExecutor, es.cpp.ProxyExecutor): replay from the
flat arrays, load-time validation, call-time array checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

import externspec as es
from tests.support import custom_ops as co
from tests.support.calls import CALLS, X, Y, flat_tensors
from tests.support.executors import Executor


@pytest.mark.parametrize("omit_defaults", [False, True], ids=["write-all", "omit-defaults"])
@pytest.mark.parametrize(("label", "op", "args", "kwargs"), CALLS, ids=[c[0] for c in CALLS])
def test_replay_matches_eager_bitwise(label, op, args, kwargs, omit_defaults, tmp_path: Path,
                                      executor: Executor) -> None:
    b = es.SpecBuilder(omit_defaults=omit_defaults)
    site = b.add(op, args, kwargs)
    es.dump(b.build(), tmp_path / "spec.json")
    ex = executor(tmp_path / "spec.json")
    slots = list(site.tensor_args)
    ex.call_function(site.index, site.int_args, slots)
    got = slots[len(slots) - site.num_tensor_outputs:]
    want = flat_tensors(op(*args, **kwargs))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape and g.stride() == w.stride()
        assert torch.equal(g, w), label


def test_in_place_and_mutating_ops_mutate_the_callers_tensors(executor: Executor) -> None:
    b = es.SpecBuilder()
    t, acc = X.clone(), Y.clone()
    s1 = b.add(co.scale_, (t, 3.0))
    s2 = b.add(co.add_into, (X, acc))
    ex = executor(es.loads(es.dumps(b.build()), es.ExternKernelNodes))
    slots = list(s1.tensor_args)
    ex.call_function(s1.index, s1.int_args, slots)
    assert slots[1] is t and torch.equal(t, X * 3)
    ex.call_function(s2.index, s2.int_args, list(s2.tensor_args))
    assert torch.equal(acc, X + Y)


def test_one_executor_many_nodes_and_fresh_arrays_each_call(executor: Executor) -> None:
    b = es.SpecBuilder()
    sites = [b.add(co.list_out, (X, 2)), b.add(co.int_out, (X,)), b.add(co.kwonly, (X, 1), {"k": 2})]
    ex = executor(b.build())
    assert len(ex) == 3
    # Same node, other values in the arrays: the plan slices, it does not remember.
    other = torch.ones(5, 4)
    slots: list[Any] = [other, None, None]
    ex.call_function(sites[0].index, [2], slots)
    assert [torch.equal(s, other * (k + 1)) for k, s in enumerate(slots[1:])] == [True] * 2
    slots = [other, None]
    ex.call_function(sites[2].index, [4, 5, 6], slots)
    assert torch.equal(slots[1], co._kwonly(other, 4, k=5, s=6))


# ----------------------------------------------------------------------------------------------
# Load-time errors name the node, the argument and both types.

def spec_dict(op, args, kwargs=None, omit_defaults=False) -> dict:
    b = es.SpecBuilder(omit_defaults=omit_defaults)
    b.add(op, args, kwargs)
    return json.loads(es.dumps(b.build()))


def load(executor: Executor, doc: dict) -> Any:
    return executor(es.loads(json.dumps(doc), es.ExternKernelNodes))


def test_unknown_op_is_a_load_error_naming_node_and_target(executor: Executor) -> None:
    doc = spec_dict(co.tuple_out, (X, Y))
    doc["nodes"][0]["node"]["target"] = "externspec_test::no_such_op"
    with pytest.raises(es.SpecMismatchError, match=r"node 0 `buf0` \(externspec_test::no_such_op\): no op"):
        load(executor, doc)


@pytest.mark.parametrize("target", ["os.system", "aten::add.Tensor.x", "__import__('os')::x", "aten::", "::add"])
def test_targets_are_looked_up_never_evaluated(target: str, executor: Executor) -> None:
    doc = spec_dict(co.tuple_out, (X, Y))
    doc["nodes"][0]["node"]["target"] = target
    with pytest.raises(es.SpecMismatchError, match=r"is not of the form ns::op or ns::op.overload"):
        load(executor, doc)


def test_custom_op_hint(executor: Executor) -> None:
    doc = spec_dict(co.tuple_out, (X, Y))
    doc["nodes"][0]["node"]["target"] = "externspec_gone::op"
    doc["nodes"][0]["node"]["metadata"]["torch_library_custom_op"] = "1"
    with pytest.raises(es.SpecMismatchError, match=r"torch.library.custom_op: define it in Python"):
        load(executor, doc)


def test_member_mismatch_names_argument_and_both_types(executor: Executor) -> None:
    doc = spec_dict(co.floats, (X, 1.0, 2.0, []))
    doc["nodes"][0]["node"]["inputs"][1]["arg"] = {"as_int": 1}
    with pytest.raises(es.SpecMismatchError) as info:
        load(executor, doc)
    assert str(info.value) == (
        "node 0 `buf0` (externspec_test::floats): argument `a` is `as_int` in the spec (type `float` at export, "
        "runtime type `float` accepts as_float)")


def test_missing_required_argument_is_a_load_error(executor: Executor) -> None:
    doc = spec_dict(co.tuple_out, (X, Y))
    del doc["nodes"][0]["node"]["inputs"][1]
    with pytest.raises(es.SpecMismatchError, match="argument `y` of type `Tensor` has no default"):
        load(executor, doc)


def test_duplicate_argument_is_a_load_error(executor: Executor) -> None:
    doc = spec_dict(co.tuple_out, (X, Y))
    doc["nodes"][0]["node"]["inputs"].append(doc["nodes"][0]["node"]["inputs"][1])
    with pytest.raises(es.SpecMismatchError, match="argument `y` is given twice"):
        load(executor, doc)


def test_output_member_mismatch_is_a_load_error(executor: Executor) -> None:
    doc = spec_dict(co.optional_out, (X, True))
    doc["nodes"][0]["node"]["outputs"][1] = {"as_tensor": {"name": "b"}}
    with pytest.raises(es.SpecMismatchError, match="output 1 is `as_tensor` in the spec, but runtime return type "
                                                     r"`Tensor\?` is `as_optional_tensor`"):
        load(executor, doc)


def test_bad_enum_value_is_a_load_error(executor: Executor) -> None:
    doc = spec_dict(co.enum_defaults, (X,))
    doc["nodes"][0]["node"]["inputs"][1]["arg"] = {"as_scalar_type": 0}
    with pytest.raises(es.SpecMismatchError,
                       match=r"argument `dtype` \(as_scalar_type\): ScalarType 0 \(UNKNOWN\) names no torch dtype"):
        load(executor, doc)


def test_unparsable_recorded_schema_is_a_load_error(executor: Executor) -> None:
    doc = spec_dict(co.tuple_out, (X, Y))
    doc["nodes"][0]["node"]["metadata"]["externspec.op_schema"] = "not a schema("
    with pytest.raises(es.SpecMismatchError, match=r"metadata `externspec.op_schema` is not an op schema"):
        load(executor, doc)


def test_torchbind_is_refused_at_load(executor: Executor) -> None:
    doc = spec_dict(co.tuple_out, (X, Y))
    doc["nodes"][0]["node"]["target"] = "call_torchbind"
    with pytest.raises(es.SpecMismatchError, match="torchbind"):
        load(executor, doc)


def test_file_errors_carry_the_path(tmp_path: Path, executor: Executor) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"nodes": [{"name": "n", "node": {"target": 3}}]}')
    with pytest.raises(es.DecodeError, match=r"bad.json: \$.nodes\[0\].node.target: expected `str`, got `int`"):
        executor(path)


def test_newer_major_is_refused(executor: Executor) -> None:
    doc = spec_dict(co.tuple_out, (X, Y))
    doc["schema_version"] = {"major": es.SCHEMA_VERSION.major + 1, "minor": 0}
    with pytest.raises(es.VersionError, match="major"):
        executor(es.loads(json.dumps(doc), es.ExternKernelNodes))


# ----------------------------------------------------------------------------------------------
# Call-time errors: lengths checked before reading; outputs checked before writing.

def test_array_lengths_are_checked_before_reading(executor: Executor) -> None:
    b = es.SpecBuilder()
    site = b.add(co.list_out, (X, 3))
    ex = executor(b.build())
    with pytest.raises(es.CallError, match=r"expected 1 input \+ 3 output tensor slots and 1 input \+ 0 int-return "
                                           "slots, got 4 tensors and 0 ints"):
        ex.call_function(0, [], list(site.tensor_args))
    with pytest.raises(es.CallError, match="got 2 tensors"):
        ex.call_function(0, [3], [X, None])
    with pytest.raises(es.CallError, match="extern node index 5 out of range: the spec has 1 nodes"):
        ex.call_function(5, [3], list(site.tensor_args))


def test_list_return_length_is_checked_before_writing(executor: Executor) -> None:
    b = es.SpecBuilder()
    b.add(co.list_out, (X, 3))
    ex = executor(b.build())
    with pytest.raises(es.CallError, match="return 0 is a list of 5 tensors, but the spec has 3 output slots"):
        ex.call_function(0, [5], [X, None, None, None])


def test_int_returns_are_checked(executor: Executor) -> None:
    b = es.SpecBuilder()
    site = b.add(co.int_out, (X,))
    ex = executor(b.build())
    with pytest.raises(es.CallError, match=r"int return 1 is 33, but the caller expects 99 \(int_args\[0\]\)"):
        ex.call_function(0, [99], list(site.tensor_args))


def test_optional_return_presence_is_checked(executor: Executor) -> None:
    b = es.SpecBuilder()
    b.add(co.optional_out, (X, False))
    doc = json.loads(es.dumps(b.build()))
    doc["nodes"][0]["node"]["inputs"][1]["arg"] = {"as_bool": True}  # now the op returns a tensor there
    ex = load(executor, doc)
    with pytest.raises(es.CallError, match="return 1 was None at export, the op returned a Tensor"):
        ex.call_function(0, [], [X, None])
