"""The executor conformance corpus: each case is a spec (a built one and a mutation), call arrays,
and the expected result or error (kind and whole message), run over both executors by the
`executor` fixture. A difference between the two is a failure unless declared in
tests/support/executors.py.

The cases are the hostile inputs of the op policy (externspec/abi/op_policy.py), load validation
(node names, op-schema metadata, device indices) and call-time checks (returns)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import externspec as es
from tests.support.executors import Executor, diverges
from tests.support.load_errors import FALSE, LOAD_ERRORS, NONE, Doc, X, batch_norm, built, node, spec_of


@pytest.mark.parametrize(("make", "message"), [c[1:] for c in LOAD_ERRORS], ids=[c[0] for c in LOAD_ERRORS])
def test_load_errors(make: Callable[[], Doc], message: str, executor: Executor) -> None:
    with pytest.raises(es.SpecMismatchError) as info:
        executor(spec_of(make()))
    assert str(info.value) == message


def test_allow_ops_lets_a_denied_op_run(executor: Executor, tmp_path: Path) -> None:
    """The allow list is the only way past the deny list: the same spec refused by default reads
    the file once the user names the op."""
    data = tmp_path / "data.bin"
    data.write_bytes(torch.arange(4, dtype=torch.float32).numpy().tobytes())
    doc = node("aten::from_file", {"filename": {"as_string": str(data)}, "shared": FALSE, "size": {"as_int": 4}},
               [{"as_tensor": {"name": "o"}}])
    with pytest.raises(es.SpecMismatchError, match="denied by the executor's op policy"):
        executor(spec_of(doc))
    for allow in (["aten::from_file"], ["aten::from_file.default"], ["aten::*"]):
        slots: list[Any] = [None]
        executor(spec_of(doc), allow_ops=allow).call_function(0, [4], slots)  # `size` is a dynamic int
        assert torch.equal(slots[0], torch.arange(4, dtype=torch.float32))
    with pytest.raises(es.SpecMismatchError, match="denied"):
        executor(spec_of(doc), allow_ops=["aten::from_file.out", "aten::_print"])


@pytest.mark.parametrize("bad", ["from_file", "aten::", "aten::x.y.z", "aten::__class__.x y"])
def test_allow_ops_entries_must_be_op_names(bad: str, executor: Executor) -> None:
    doc, _ = built(torch.ops.aten.relu.default, (X,))
    with pytest.raises(ValueError, match=re.escape(f"allow_ops entry {bad!r} is not of the form ns::name, "
                                                   "ns::name.overload or ns::*")):
        executor(spec_of(doc), allow_ops=[bad])
    with pytest.raises(TypeError, match="allow_ops must be a collection of op names"):
        executor(spec_of(doc), allow_ops="aten::relu")


def test_from_file_shared_creates_no_file(executor: Executor, tmp_path: Path) -> None:
    """Before the policy, shared=True created (and extended) a file at the spec's path."""
    target = tmp_path / "planted.bin"
    doc = node("aten::from_file", {"filename": {"as_string": str(target)}, "shared": {"as_bool": True},
                                   "size": {"as_int": 1 << 20}}, [{"as_tensor": {"name": "o"}}])
    with pytest.raises(es.SpecMismatchError, match="denied"):
        executor(spec_of(doc))
    assert not target.exists()


def test_interpreter_only_ops_change_no_global_state(executor: Executor) -> None:
    """aten::set_grad_enabled and aten::manual_seed resolved through torch.ops (the Python executor
    before) switched grad mode off and reseeded the global generator when called."""
    rng = torch.get_rng_state()
    for make in (LOAD_ERRORS[3][1], LOAD_ERRORS[4][1]):
        with pytest.raises(es.SpecMismatchError, match="is registered"):
            executor(spec_of(make()))
    assert torch.is_grad_enabled() and torch.equal(torch.get_rng_state(), rng)


def test_guard_lets_the_safe_form_run(executor: Executor) -> None:
    """A guard refuses only the crashing combination: training=True without stats runs."""
    doc = batch_norm("aten::native_batch_norm", {"running_mean": NONE, "running_var": NONE,
                                                 "training": {"as_bool": True}})
    slots: list[Any] = [X.reshape(1, 2, 2), None, None, None]
    executor(spec_of(doc)).call_function(0, [], slots)
    want = torch.ops.aten.native_batch_norm(X.reshape(1, 2, 2), None, None, None, None, True, 0.1, 1e-5)
    assert all(torch.equal(s, w) for s, w in zip(slots[1:], want, strict=True))


def load_torch_test_library(name: str) -> None:
    """One of the test libraries torch's CPU wheels ship in torch/lib (torch 2.14.1's CUDA wheel
    ships none)."""
    path = Path(torch.__file__).parent / "lib" / name
    if not path.exists():
        pytest.skip(f"torch {torch.__version__} ships no {name}, the test library this case needs")
    torch.ops.load_library(path)


@pytest.fixture(scope="module")
def aoti_custom_ops() -> None:
    load_torch_test_library("libaoti_custom_ops.so")


def test_undefined_optional_return_is_none(executor: Executor, aoti_custom_ops: None) -> None:
    """torch's own C++ op returns its `Tensor?`s as undefined tensors: both executors read None
    (the C++ one called it "a Tensor" before)."""
    y = torch.ones(2)
    doc, site = built(torch.ops.aoti_custom_ops.fn_with_optional_tensor_output.default, (y, y))
    slots = list(site.tensor_args)
    executor(spec_of(doc)).call_function(0, site.int_args, slots)
    first, second, third = torch.ops.aoti_custom_ops.fn_with_optional_tensor_output(y, y)
    assert third is None and torch.equal(slots[2], first) and torch.equal(slots[3], second) and len(slots) == 4
    doc["nodes"][0]["node"]["outputs"][2] = {"as_optional_tensor": {"as_tensor": {"name": "buf3"}}}
    with pytest.raises(es.CallError) as info:
        executor(spec_of(doc)).call_function(0, site.int_args, [*site.tensor_args, None])
    assert str(info.value) == ("node 0 `buf0` (aoti_custom_ops::fn_with_optional_tensor_output): return 2 was a "
                               "Tensor at export, the op returned None")


FOO_CLASS = "__torch__.torch.classes._TorchScriptTesting._Foo"


def test_custom_objects(executor: Executor) -> None:
    load_torch_test_library("libtorchbind_test.so")
    doc = node("_TorchScriptTesting::takes_foo", {
        "foo": {"as_custom_obj": {"name": "obj0", "class_fqn": FOO_CLASS}}, "x": {"as_tensor": {"name": "x"}}},
        [{"as_tensor": {"name": "o"}}])
    foo = torch.classes._TorchScriptTesting._Foo(10, 20)
    if executor.kind == "python":
        assert diverges("custom_objects")
        with pytest.raises(es.SpecMismatchError, match="argument `foo` has runtime type"):
            executor(spec_of(doc))
        return
    slots: list[Any] = [X, None]
    executor(spec_of(doc), custom_objects={"obj0": foo}).call_function(0, [], slots)
    assert torch.equal(slots[1], torch.ops._TorchScriptTesting.takes_foo(foo, X))
