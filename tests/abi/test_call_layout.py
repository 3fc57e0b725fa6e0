"""The call layout (docs/torch-compat.md, "The call layout"), one body over both executors: a spec
that states it (schema 1.2's `call_layout`) is laid out by it, a versioned one that does not is
NODE_ARGUMENTS, and torch-written files decide it from their calls: torch 2.11 to 2.14's wrappers
pass an omitted kwarg-only argument's default in the arrays (OMITTED_DEFAULTS_PASSED), 2.15's do not
(NODE_ARGUMENTS), and the file does not say which.
`addmm(self, mat1, mat2, *, Scalar beta=1, Scalar alpha=1)` without `beta` and `alpha` is such a
node: 4 tensors and no ints in one layout, 4 tensors and 2 ints in the other. Each call's own lengths
pick the candidate they match, once per spec; beta and alpha other than 1 show that a value is read
from its own slot."""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch

import externspec as es
from externspec import CallLayout
from tests.support.executors import Executor

NODE, PASSED = CallLayout.NODE_ARGUMENTS, CallLayout.OMITTED_DEFAULTS_PASSED


def tensor(name: str) -> dict[str, Any]:
    return {"as_tensor": {"name": name}}


def addmm(name: str) -> dict[str, Any]:
    """`aten::addmm` as torch writes it when the call gave neither `beta` nor `alpha`."""
    inputs = [{"name": n, "arg": tensor(n), "kind": 1} for n in ("self", "mat1", "mat2")]
    return {"name": name, "node": {"target": "aten::addmm", "inputs": inputs, "outputs": [tensor(f"{name}_out")],
                                   "metadata": {}}}


def sum_dim(name: str) -> dict[str, Any]:
    """`aten::sum.dim_IntList(self, dim=[1], keepdim=False)`: its omitted kwarg-only `dtype` (None) takes
    no slot, so its two layouts are one (1 input tensor, 1 output tensor, 1 int)."""
    inputs = [{"name": "self", "arg": tensor("x"), "kind": 1}, {"name": "dim", "arg": {"as_ints": [1]}, "kind": 1},
              {"name": "keepdim", "arg": {"as_bool": False}, "kind": 1}]
    return {"name": name, "node": {"target": "aten::sum.dim_IntList", "inputs": inputs,
                                   "outputs": [tensor(f"{name}_out")], "metadata": {}}}


SPEC = json.dumps({"nodes": [addmm("buf0"), addmm("buf1"), sum_dim("buf2")]})
B, M1, M2 = torch.randn(3), torch.randn(2, 4), torch.randn(4, 3)


def call(ex: Any, index: int, ints: list[int]) -> torch.Tensor:
    slots: list[Any] = [B, M1, M2, None]
    ex.call_function(index, ints, slots)
    return slots[3]


def other(layout: CallLayout) -> CallLayout:
    return PASSED if layout == NODE else NODE


INTS = {NODE: [], PASSED: [2, 3]}  # a call's int array in each layout: beta 2, alpha 3 when passed
WANT = {NODE: torch.addmm(B, M1, M2), PASSED: torch.addmm(B, M1, M2, beta=2, alpha=3)}


@pytest.mark.parametrize("layout", [NODE, PASSED], ids=lambda layout: layout.name)
def test_the_first_deciding_call_locks_the_layout_it_matches(executor: Executor, layout: CallLayout) -> None:
    ex = executor(SPEC)
    assert ex.call_layout is None
    torch.testing.assert_close(call(ex, 0, INTS[layout]), WANT[layout])
    assert ex.call_layout == layout
    torch.testing.assert_close(call(ex, 1, INTS[layout]), WANT[layout])
    wrong = INTS[other(layout)]
    with pytest.raises(es.CallError) as info:
        call(ex, 1, wrong)
    assert str(info.value) == (
        f"node 1 `buf1` (aten::addmm): got 4 tensors and {len(wrong)} ints, its {other(layout).name} layout, but this "
        f"package's calls are laid out {layout.name} (decided by the first call of node 0; 4 tensors and "
        f"{len(INTS[layout])} ints here): a package has one call layout")


def test_a_call_matching_neither_layout_names_both_and_decides_nothing(executor: Executor) -> None:
    ex = executor(SPEC)
    with pytest.raises(es.CallError) as info:
        call(ex, 0, [1])
    assert str(info.value) == (
        "node 0 `buf0` (aten::addmm): got 4 tensors and 1 ints, which match neither of its call layouts "
        "(NODE_ARGUMENTS: 4 tensors and 0 ints; OMITTED_DEFAULTS_PASSED: 4 tensors and 2 ints)")
    assert ex.call_layout is None
    torch.testing.assert_close(call(ex, 0, [2, 3]), WANT[PASSED])


def test_a_node_whose_layouts_coincide_has_one_and_decides_nothing(executor: Executor) -> None:
    ex = executor(SPEC)
    x = torch.randn(2, 5)
    slots: list[Any] = [x, None]
    ex.call_function(2, [1], slots)
    torch.testing.assert_close(slots[1], x.sum(1))
    assert ex.call_layout is None
    with pytest.raises(es.CallError, match=r"^node 2 `buf2` \(aten::sum.dim_IntList\): expected 1 input \+ 1 "
                                           r"output tensor slots and 1 input \+ 0 int-return slots, got 2 tensors and "
                                           r"0 ints$"):
        ex.call_function(2, [], [x, None])


@pytest.mark.parametrize("layout", [NODE, PASSED], ids=lambda layout: layout.name)
def test_an_explicit_layout_is_the_only_one(executor: Executor, layout: CallLayout) -> None:
    for option in (layout, layout.name):
        ex = executor(SPEC, call_layout=option)
        assert ex.call_layout == layout
        torch.testing.assert_close(call(ex, 0, INTS[layout]), WANT[layout])
        ints = 2 if layout == PASSED else 0
        with pytest.raises(es.CallError, match=rf"^node 0 `buf0` \(aten::addmm\): expected 3 input \+ 1 output tensor "
                                               rf"slots and {ints} input \+ 0 int-return slots, got 4 tensors"):
            call(ex, 0, INTS[other(layout)])


def versioned(minor: int, layout: CallLayout | None) -> str:
    """SPEC as externspec writes it: schema 1.`minor`, stating `layout` (schema 1.2's `call_layout`)."""
    doc = json.loads(SPEC)
    doc["schema_version"] = {"major": es.SCHEMA_VERSION.major, "minor": minor}
    if layout is not None:
        doc["call_layout"] = int(layout)
    return json.dumps(doc)


def test_a_versioned_file_stating_no_layout_is_node_arguments(executor: Executor) -> None:
    """Schema 1.0 and 1.1 files have no `call_layout`: externspec wrote them, so their nodes name every
    argument their arrays carry."""
    for minor in (1, es.SCHEMA_VERSION.minor):
        for option in ("auto", NODE):
            ex = executor(versioned(minor, None), call_layout=option)
            assert ex.call_layout == NODE
            torch.testing.assert_close(call(ex, 0, []), WANT[NODE])
        with pytest.raises(es.SpecMismatchError) as info:
            executor(versioned(minor, None), call_layout=PASSED)
        assert str(info.value) == (
            "the call_layout option is OMITTED_DEFAULTS_PASSED, but the spec is laid out NODE_ARGUMENTS (it has a "
            "schema_version and states no call_layout: its nodes name every argument their arrays carry)")


@pytest.mark.parametrize("layout", [NODE, PASSED], ids=lambda layout: layout.name)
def test_a_stated_layout_is_the_only_one(executor: Executor, layout: CallLayout) -> None:
    """A spec stating its layout is planned by it, whatever its calls pass: addmm's candidates differ,
    and only the stated one's lengths run (beta 2, alpha 3 read from their slots when passed)."""
    spec = versioned(es.SCHEMA_VERSION.minor, layout)
    for option in ("auto", layout, layout.name):
        ex = executor(spec, call_layout=option)
        assert ex.call_layout == layout
        torch.testing.assert_close(call(ex, 0, INTS[layout]), WANT[layout])
        with pytest.raises(es.CallError, match=rf"^node 1 `buf1` \(aten::addmm\): expected 3 input \+ 1 output tensor "
                                               rf"slots and {len(INTS[layout])} input \+ 0 int-return slots"):
            call(ex, 1, INTS[other(layout)])
    with pytest.raises(es.SpecMismatchError, match=r"^node 0 `buf0` \(aten::addmm\): its call in the package's "
                                                   r"wrapper passes 4 tensors and \d ints, but its plan takes"):
        executor(spec, call_lengths=[(0, len(INTS[other(layout)]), 4)])


@pytest.mark.parametrize("layout", [NODE, PASSED], ids=lambda layout: layout.name)
def test_an_option_contradicting_the_stated_layout_is_refused(executor: Executor, layout: CallLayout) -> None:
    with pytest.raises(es.SpecMismatchError) as info:
        executor(versioned(es.SCHEMA_VERSION.minor, layout), call_layout=other(layout))
    assert str(info.value) == (f"the call_layout option is {other(layout).name}, but the spec is laid out "
                               f"{layout.name} (it states call_layout {layout.name})")


def test_an_unknown_option_is_a_value_error(executor: Executor) -> None:
    with pytest.raises(ValueError, match=r'call_layout must be "auto", "NODE_ARGUMENTS" or "OMITTED_DEFAULTS_PASSED", '
                                         r"got 'torch 2\.15'"):
        executor(SPEC, call_layout="torch 2.15")


@pytest.mark.parametrize("layout", [NODE, PASSED], ids=lambda layout: layout.name)
def test_the_wrappers_calls_decide_at_load(executor: Executor, layout: CallLayout) -> None:
    n = len(INTS[layout])
    ex = executor(SPEC, call_lengths=[(2, 1, 2), (0, n, 4), (1, n, 4)])
    assert ex.call_layout == layout
    torch.testing.assert_close(call(ex, 1, INTS[layout]), WANT[layout])
    with pytest.raises(es.CallError, match=r"\(decided by the wrapper's call of node 0; "):
        call(ex, 1, INTS[other(layout)])


@pytest.mark.parametrize(("calls", "message"), [
    ([(0, 1, 4)], "node 0 `buf0` (aten::addmm): its call in the package's wrapper passes 4 tensors and 1 ints, which "
                  "match neither of its call layouts (NODE_ARGUMENTS: 4 tensors and 0 ints; OMITTED_DEFAULTS_PASSED: 4 "
                  "tensors and 2 ints)"),
    ([(0, 0, 4), (1, 2, 4)], "node 1 `buf1` (aten::addmm): its call in the package's wrapper passes 4 tensors and 2 "
                             "ints, its OMITTED_DEFAULTS_PASSED layout, but this package's calls are laid out "
                             "NODE_ARGUMENTS (decided by the wrapper's call of node 0; 4 tensors and 0 ints here): a "
                             "package has one call layout"),
    ([(2, 0, 2)], "node 2 `buf2` (aten::sum.dim_IntList): its call in the package's wrapper passes 2 tensors and 0 "
                  "ints, but its plan takes 2 tensors and 1 ints"),
    ([(3, 0, 4)], "the package's wrapper calls extern node 3, but the spec has 3 nodes"),
], ids=["neither", "both-layouts", "one-layout", "no-such-node"])
def test_a_wrapper_call_that_matches_no_plan_is_refused_at_load(executor: Executor, calls: list[tuple[int, int, int]],
                                                                message: str) -> None:
    with pytest.raises(es.SpecMismatchError) as info:
        executor(SPEC, call_lengths=calls)
    assert str(info.value) == message
