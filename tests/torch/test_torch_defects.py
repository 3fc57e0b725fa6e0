"""One test per defect of torch 2.13 (docs/torch-defects.md) that concerns
the exporter or the executor, showing externspec's behaviour. The defects of torch's own C++
header and of decoding speed belong to the wire/codegen issues; the c10-numbered enum default
that torch writes and then cannot read is in test_aoti_crosscheck.py (it needs a compiled model).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import pytest
import torch

import externspec as es
from tests.support import custom_ops as co

X = torch.arange(12.0).reshape(3, 4) / 3
B = torch.full((3, 4), -2.0)


def build(*calls: tuple, **options: Any) -> tuple[es.ExternKernelNodes, list[es.CallSite]]:
    b = es.SpecBuilder(**options)
    sites = [b.add(*c) for c in calls]
    return es.loads(es.dumps(b.build()), es.ExternKernelNodes), sites


def replay(spec: es.ExternKernelNodes, site: es.CallSite) -> list[Any]:
    slots = list(site.tensor_args)
    es.ProxyExecutor(spec).call_function(site.index, site.int_args, slots)
    return slots[len(slots) - site.num_tensor_outputs:]


def test_extern_json_carries_a_version_and_it_is_checked() -> None:
    spec, _ = build((co.tuple_out, (X, B)))
    doc = json.loads(es.dumps(spec))
    assert doc["schema_version"] == {"major": es.SCHEMA_VERSION.major, "minor": es.SCHEMA_VERSION.minor}
    doc["schema_version"]["major"] += 1
    with pytest.raises(es.VersionError):
        es.loads(json.dumps(doc), es.ExternKernelNodes)
    del doc["schema_version"]  # torch-written: read under the baseline, still validated against the op
    es.ProxyExecutor(es.loads(json.dumps(doc), es.ExternKernelNodes))


def test_reordered_inputs_do_not_silently_swap_tensors() -> None:
    # torch 2.13 fills slots in JSON order: reversing the inputs ran with x and y swapped.
    spec, _ = build((co.tuple_out, (X, B)))
    doc = json.loads(es.dumps(spec))
    doc["nodes"][0]["node"]["inputs"].reverse()
    with pytest.raises(es.SpecMismatchError, match="argument `x` comes after `y` in the spec but before it in "
                                                     "the op schema"):
        es.ProxyExecutor(es.loads(json.dumps(doc), es.ExternKernelNodes))


class Untouchable(Sequence):
    """An array that fails the test if the executor reads it."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        raise AssertionError("the executor read the array before checking its length")


def test_array_lengths_are_checked_before_any_read() -> None:
    # torch 2.13 read ints[2] of a 2-element array when the spec said `dims` had 3 elements.
    spec, (site,) = build((co.scalars, (X, 1, [1, 2])))
    assert site.int_args == [1, 1, 2]
    doc = json.loads(es.dumps(spec))
    doc["nodes"][0]["node"]["inputs"][2]["arg"] = {"as_ints": [1, 2, 3]}  # the spec now says 3 elements
    ex = es.ProxyExecutor(es.loads(json.dumps(doc), es.ExternKernelNodes))
    with pytest.raises(es.CallError, match=r"expected 1 input \+ 1 output tensor slots and 4 input \+ 0 int-return "
                                           "slots, got 2 tensors and 3 ints"):
        ex.call_function(0, Untouchable(3), [X, None])


def test_list_returns_are_length_checked_before_writing() -> None:
    spec, _ = build((co.list_out, (X, 2)))
    slots: list[Any] = [X, None, None]
    with pytest.raises(es.CallError, match="return 0 is a list of 4 tensors, but the spec has 2 output slots"):
        es.ProxyExecutor(spec).call_function(0, [4], slots)
    assert slots[1:] == [None, None]  # nothing written past (or into) the slots


@pytest.mark.parametrize("values", [(math.inf, -math.inf, [math.nan]), (math.nan, 0.5, [math.inf, -math.inf])])
def test_non_finite_floats_round_trip_and_run(values) -> None:
    # torch 2.13 writes "Infinity" and then fails to load it (type_error.302).
    a, b, c = values
    spec, (site,) = build((co.floats, (X, a, b, c)))
    assert '"Infinity"' in es.dumps(spec) or '"NaN"' in es.dumps(spec)
    (got,) = replay(spec, site)
    assert torch.equal(got, co.floats(X, a, b, c))


def test_bool_scalars_are_static_not_int_slots() -> None:
    # torch 2.13 puts True into the int array; the generated wrapper does not compile.
    spec, (site,) = build((co.scalars, (X, True, [False, True]), {"z": False}))
    inputs = {i.name: i.arg for i in spec.nodes[0].node.inputs}
    assert inputs["s"].type == inputs["z"].type == "as_bool" and inputs["ss"].type == "as_bools"
    assert site.int_args == []
    (got,) = replay(spec, site)
    assert torch.equal(got, co.scalars(X, True, [False, True], z=False))


@pytest.mark.parametrize("op", [co.kwonly, co.kwonly_fixed], ids=["default-layout", "needs_fixed_stride_order"])
@pytest.mark.parametrize("omit_defaults", [False, True], ids=["write-all", "omit-defaults"])
def test_kwarg_only_defaults_keep_the_arrays_in_sync(op, omit_defaults) -> None:
    # torch 2.13 counted omitted kwarg-only defaults in the arrays but not in the JSON:
    # "Mismatch between ints consumed and num_ints".
    spec, (site,) = build((op, (X,)), omit_defaults=omit_defaults)
    written = [i.name for i in spec.nodes[0].node.inputs]
    assert written == (["x"] if omit_defaults else ["x", "p", "k", "f", "s", "dtype", "mode"])
    assert site.int_args == ([] if omit_defaults else [2, 3, 4])
    (got,) = replay(spec, site)
    assert torch.equal(got, op(X))


def test_new_argument_without_default_is_not_a_silent_none() -> None:
    lib = torch.library.Library("externspec_defect_newarg", "DEF")
    try:
        lib.define("g(Tensor x) -> Tensor")
        lib.impl("g", lambda x: x + 1, "CompositeExplicitAutograd")
        spec, _ = build((torch.ops.externspec_defect_newarg.g.default, (X,)))
        lib._destroy()
        lib = torch.library.Library("externspec_defect_newarg", "DEF")
        lib.define("g(Tensor x, Tensor y) -> Tensor")
        lib.impl("g", lambda x, y: x + y, "CompositeExplicitAutograd")
        with pytest.raises(es.SpecMismatchError, match="argument `y` of type `Tensor` has no default"):
            es.ProxyExecutor(spec)
    finally:
        lib._destroy()


def test_removed_static_argument_is_not_silently_dropped() -> None:
    spec, _ = build((co.kwonly, (X,)))
    doc = json.loads(es.dumps(spec))
    doc["nodes"][0]["node"]["inputs"][-1]["name"] = "gone"  # a `mode` that no longer exists
    with pytest.raises(es.SpecMismatchError, match=r"argument `gone` .as_string. is not in the runtime op schema"):
        es.ProxyExecutor(es.loads(json.dumps(doc), es.ExternKernelNodes))


def test_unknown_argument_names_are_not_ignored() -> None:
    spec, _ = build((co.tuple_out, (X, B)))
    doc = json.loads(es.dumps(spec))
    doc["nodes"][0]["node"]["inputs"].append({"name": "extra", "arg": {"as_bool": True}, "kind": 2})
    with pytest.raises(es.SpecMismatchError, match=r"argument `extra` .as_bool. is not in the runtime op schema"):
        es.ProxyExecutor(es.loads(json.dumps(doc), es.ExternKernelNodes))
