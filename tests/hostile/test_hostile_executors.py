"""Specs that lie, and callers that pass the wrong arrays, against both executors (the `executor`
fixture: es.ProxyExecutor and es.cpp.ProxyExecutor run every test body).

Every such case is an `es.ExternSpecError` (SpecMismatchError at load, CallError at call) that
names the node, raised before any slot outside the arrays is read and before any output slot is
written; nothing else escapes, whatever the spec says.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import externspec as es
from tests.support import custom_ops as co
from tests.support.executors import Executor, slot_counts
from tests.support.strategies import mutated_trees

X = torch.arange(12.0).reshape(3, 4) / 7
Y = torch.arange(12.0).reshape(3, 4) * -0.5


def built(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> tuple[dict[str, Any], es.CallSite]:
    b = es.SpecBuilder()
    site = b.add(op, args, kwargs)
    return json.loads(es.dumps(b.build())), site


def spec_of(doc: dict[str, Any]) -> es.ExternKernelNodes:
    return es.loads(json.dumps(doc), es.ExternKernelNodes)


SITES = {
    "tuple_out": (co.tuple_out, (X, Y)),
    "list_out": (co.list_out, (X, 3)),
    "int_out": (co.int_out, (X,)),
    "all_inputs": (co.all_inputs, co.all_inputs_example(X, Y)[0]),
    "aten_cat": (torch.ops.aten.cat.default, ([X, Y, X],)),
    "aten_index": (torch.ops.aten.index.Tensor, (X, [None, torch.tensor([0, 2])])),
}


@pytest.mark.parametrize("name", sorted(SITES))
@pytest.mark.parametrize(("d_tensors", "d_ints"), [(-1, 0), (1, 0), (0, -1), (0, 1), (-100, 0), (0, 100)])
def test_arrays_shorter_or_longer_than_the_plan(name: str, d_tensors: int, d_ints: int, executor: Executor) -> None:
    op, args = SITES[name]
    doc, site = built(op, args, co.all_inputs_example(X, Y)[1] if name == "all_inputs" else None)
    ex = executor(spec_of(doc))
    tensors = list(site.tensor_args)
    ints = list(site.int_args)
    tensors = tensors[:len(tensors) + d_tensors] if d_tensors < 0 else tensors + [X] * d_tensors
    ints = ints[:len(ints) + d_ints] if d_ints < 0 else ints + [1] * d_ints
    if len(tensors) == len(site.tensor_args) and len(ints) == len(site.int_args):  # no ints to take away
        ex.call_function(0, ints, tensors)
        assert all(isinstance(t, torch.Tensor) for t in tensors)
        return
    before = list(tensors)
    with pytest.raises(es.CallError, match=r"node 0 `buf0` .*expected \d+ input \+ \d+ output tensor slots"):
        ex.call_function(0, ints, tensors)
    assert all(a is b for a, b in zip(tensors, before, strict=True))  # no output slot written


def test_spec_lists_more_tensors_than_the_caller_passes(executor: Executor) -> None:
    """The plan comes from the spec, the arrays from the compiled code: a spec whose tensor list is
    longer (or 100k long) than what the code passes is caught by the length check, not read past."""
    for extra in (1, 100_000):
        doc, site = built(torch.ops.aten.cat.default, ([X, Y],))
        inputs = doc["nodes"][0]["node"]["inputs"][0]["arg"]["as_tensors"]
        inputs.extend([{"name": f"t{i}"} for i in range(extra)])
        ex = executor(spec_of(doc))
        with pytest.raises(es.CallError, match=f"expected {2 + extra} input \\+ 1 output tensor slots"):
            ex.call_function(0, list(site.int_args), list(site.tensor_args))


def test_output_list_length_differs_at_runtime_and_nothing_is_written(executor: Executor) -> None:
    doc, _ = built(co.list_out, (X, 3))
    ex = executor(spec_of(doc))
    slots: list[Any] = [X, None, None, None]
    with pytest.raises(es.CallError, match="return 0 is a list of 2 tensors, but the spec has 3 output slots"):
        ex.call_function(0, [2], slots)
    assert slots[1:] == [None, None, None]


def test_spec_claiming_fewer_list_outputs(executor: Executor) -> None:
    doc, _ = built(co.list_out, (X, 3))
    del doc["nodes"][0]["node"]["outputs"][0]["as_tensors"][2]
    ex = executor(spec_of(doc))
    with pytest.raises(es.CallError, match="return 0 is a list of 3 tensors, but the spec has 2 output slots"):
        ex.call_function(0, [3], [X, None, None])


def test_int_return_differs(executor: Executor) -> None:
    doc, site = built(co.int_out, (X,))
    doc["nodes"][0]["node"]["outputs"][1]["as_int"] = 5
    ex = executor(spec_of(doc))
    with pytest.raises(es.CallError, match=r"int return 1 is \d+, but the caller expects 7"):
        ex.call_function(0, [7], list(site.tensor_args))


@pytest.mark.parametrize("index", [-1, -2, 1, 2**63, 1.0, "0", None])
def test_node_index_out_of_range(index: Any, executor: Executor) -> None:
    doc, site = built(co.tuple_out, (X, Y))
    ex = executor(spec_of(doc))
    with pytest.raises(es.CallError, match=f"extern node index {index!r} out of range: the spec has 1 nodes"):
        ex.call_function(index, [], list(site.tensor_args))


@pytest.mark.parametrize(("name", "slot", "value", "message"), [
    ("tuple_out", 0, 3, r"tensor_args\[0\] \(argument `x`\) should be a Tensor, got int"),
    ("tuple_out", 0, 2.5, r"tensor_args\[0\] \(argument `x`\) should be a Tensor, got float"),
    ("tuple_out", 1, True, r"tensor_args\[1\] \(argument `y`\) should be a Tensor, got bool"),
    ("tuple_out", 1, None, r"tensor_args\[1\] \(argument `y`\) should be a Tensor, got NoneType"),
    ("tuple_out", 1, "x", r"tensor_args\[1\] \(argument `y`\) should be a Tensor, got str"),
    ("list_out", -1, 2.5, r"int_args\[0\] \(argument `n`\) should be an int, got float"),
    ("list_out", -1, True, r"int_args\[0\] \(argument `n`\) should be an int, got bool"),
    ("list_out", -1, X, r"int_args\[0\] \(argument `n`\) should be an int, got Tensor"),
    ("list_out", -1, 2**64, r"int_args\[0\] \(argument `n`\) does not fit in int64"),
    pytest.param("list_out", -1, 10**5000, r"int_args\[0\] \(argument `n`\) does not fit in int64",
                 id="5000-digit-int"),
    ("aten_cat", 2, [X], r"tensor_args\[2\] \(argument `tensors`\) should be a Tensor, got list"),
    ("aten_cat", 1, 1, r"tensor_args\[1\] \(argument `tensors`\) should be a Tensor, got int"),
    ("aten_index", 1, 0, r"tensor_args\[1\] \(argument `indices`\) should be a Tensor, got int"),
    ("aten_index", 1, None, r"tensor_args\[1\] \(argument `indices`\) should be a Tensor, got NoneType"),
])
def test_wrong_element_kinds_name_the_slot(name: str, slot: int, value: Any, message: str, executor: Executor) -> None:
    op, args = SITES[name]
    doc, site = built(op, args)
    ex = executor(spec_of(doc))
    tensors, ints = list(site.tensor_args), list(site.int_args)
    if slot == -1:
        ints[0] = value
    else:
        tensors[slot] = value
    with pytest.raises(es.CallError, match=f"node 0 `buf0` .*: {message}"):
        ex.call_function(0, ints, tensors)


@pytest.mark.parametrize(("value", "message"), [
    (True, "should be an int, got bool"), (7.0, "should be an int, got float"), ("7", "should be an int, got str"),
])
def test_int_return_slot_of_the_wrong_kind(value: Any, message: str, executor: Executor) -> None:
    doc, site = built(co.int_out, (X,))
    ex = executor(spec_of(doc))
    with pytest.raises(es.CallError, match=rf"node 0 `buf0` .*: int_args\[0\] \(int return 1\) {message}"):
        ex.call_function(0, [value], list(site.tensor_args))


def test_wrapped_number_slot_without_a_tensor(executor: Executor) -> None:
    doc, site = built(torch.ops.aten.add.Tensor, (X, 2.5))
    ex = executor(spec_of(doc))
    with pytest.raises(es.CallError, match=r"tensor_args\[1\] \(argument `other`\) should be a Tensor, got float"):
        ex.call_function(0, list(site.int_args), [X, 2.5, None])


def test_kernel_errors_are_not_disguised(executor: Executor) -> None:
    """Elements of the right kinds: the kernel's own error comes through unchanged."""
    doc, site = built(torch.ops.aten.cat.default, ([X, Y],))
    ex = executor(spec_of(doc))
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        ex.call_function(0, list(site.int_args), [X, torch.zeros(2, 5), None])


def test_tensor_args_must_be_a_list(executor: Executor) -> None:
    doc, site = built(co.tuple_out, (X, Y))
    ex = executor(spec_of(doc))
    with pytest.raises(es.CallError, match=r"tensor_args must be a list .*got tuple"):
        ex.call_function(0, [], tuple(site.tensor_args))  # type: ignore[arg-type]


def test_duplicate_node_names(executor: Executor) -> None:
    b = es.SpecBuilder()
    b.add(co.tuple_out, (X, Y))
    b.add(co.tuple_out, (Y, X))
    doc = json.loads(es.dumps(b.build()))
    doc["nodes"][1]["name"] = doc["nodes"][0]["name"]
    with pytest.raises(es.SpecMismatchError, match="nodes 0 and 1 are both named `buf0`; node names must be unique"):
        executor(spec_of(doc))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                         HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_specs_load_or_fail_with_externspec_errors(data: st.DataObject, executor: Executor) -> None:
    """Whatever a spec says, loading it raises only externspec's errors; a spec that loads runs its
    node with arrays of the plan's lengths or raises a CallError / the kernel's own error."""
    name = data.draw(st.sampled_from(sorted(SITES)))
    op, args = SITES[name]
    doc, site = built(op, args, co.all_inputs_example(X, Y)[1] if name == "all_inputs" else None)
    mutated = data.draw(mutated_trees(doc))
    try:
        spec = es.loads(json.dumps(mutated), es.ExternKernelNodes)
        ex = executor(spec)
    except es.ExternSpecError as exc:
        assert str(exc)
        return
    if not len(ex):
        return
    in_tensors, num_tensors, in_ints, num_ints = slot_counts(ex, 0)
    tensors = [*site.tensor_args[:in_tensors]]
    tensors += [X] * (in_tensors - len(tensors)) + [None] * (num_tensors - in_tensors)
    ints = [*site.int_args[:in_ints]]
    ints += [1] * (num_ints - len(ints))
    try:
        ex.call_function(0, ints, tensors)
    except (es.ExternSpecError, RuntimeError, ValueError, IndexError) as exc:
        # RuntimeError/ValueError/IndexError: the kernel itself refusing lied-about static values.
        assert str(exc)


def test_every_way_to_pass_a_spec(executor: Executor, tmp_path: Any) -> None:
    """A spec object, a path (str or pathlib.Path), or the JSON text itself (str or bytes) load the same
    spec in both executors; anything else is a TypeError naming what is accepted (JSON text passed as a
    path raised `OSError: File name too long`, issue 26 item 19). Spec text is read as text: a str
    starting with `{` is never opened as a file."""
    doc, site = built(co.tuple_out, (X, Y))
    text = json.dumps(doc)
    path = tmp_path / "spec.json"
    path.write_text(text, encoding="utf-8")
    (tmp_path / "{").write_text("not a spec", encoding="utf-8")
    for spec in (spec_of(doc), str(path), path, text, "\n  " + text, text.encode(), bytearray(text.encode())):
        slots = list(site.tensor_args)
        executor(spec).call_function(0, list(site.int_args), slots)
        assert torch.equal(slots[2], X + Y), type(spec)
    with pytest.raises(es.DecodeError, match=r"^\$\.nodes\[0\]: missing required field `name`"):
        executor('{"nodes": [{"node": {}}]}')
    with pytest.raises(es.DecodeError, match=rf"^{path}: "):
        path.write_text('{"nodes": 0}', encoding="utf-8")
        executor(path)
    for wrong in (doc, 3, None, [text]):
        with pytest.raises(TypeError, match=r"^expected ExternKernelNodes, a path to its JSON file \(str or "
                                            r"os\.PathLike\), or its JSON text \(a str that starts with `\{`, or "
                                            rf"bytes\), got {type(wrong).__name__}$"):
            executor(wrong)
