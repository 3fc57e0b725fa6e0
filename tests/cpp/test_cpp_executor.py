"""es.cpp.ProxyExecutor: the same specs through the Python and C++ executors give identical
results, and bad specs and bad call arrays get the same error kinds (and, where both sides word
them, the same messages).

Slow: the first run builds the C++ extension (cached under .cache/cpp afterwards)."""

from __future__ import annotations

import gc
import json
import re
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import externspec as es
from tests.support import custom_ops as co
from tests.support.calls import CALLS, X, Y, flat_tensors
from tests.support.executors import diverges

pytestmark = pytest.mark.slow


def run_both(spec: es.ExternKernelNodes, site: es.CallSite) -> tuple[list[Any], list[Any]]:
    py_slots, cpp_slots = list(site.tensor_args), list(site.tensor_args)
    es.ProxyExecutor(spec).call_function(site.index, site.int_args, py_slots)
    es.cpp.ProxyExecutor(spec).call_function(site.index, site.int_args, cpp_slots)
    return py_slots, cpp_slots


def assert_same_tensor(a: torch.Tensor, b: torch.Tensor) -> None:
    assert (a.dtype, a.shape, a.stride()) == (b.dtype, b.shape, b.stride())
    assert torch.equal(a, b)


@pytest.mark.parametrize("omit_defaults", [False, True], ids=["write-all", "omit-defaults"])
@pytest.mark.parametrize(("label", "op", "args", "kwargs"), CALLS, ids=[c[0] for c in CALLS])
def test_cpp_matches_python_and_eager(label, op, args, kwargs, omit_defaults, tmp_path: Path) -> None:
    b = es.SpecBuilder(omit_defaults=omit_defaults)
    site = b.add(op, args, kwargs)
    es.dump(b.build(), tmp_path / "spec.json")
    py_slots, cpp_slots = run_both(b.build(), site)
    ex = es.cpp.ProxyExecutor(tmp_path / "spec.json")  # the path form reads the same spec
    path_slots = list(site.tensor_args)
    ex.call_function(site.index, site.int_args, path_slots)
    want = flat_tensors(op(*args, **kwargs))
    got = cpp_slots[len(cpp_slots) - site.num_tensor_outputs:]
    assert len(got) == len(want) == site.num_tensor_outputs
    for g, w in zip(got, want, strict=True):
        assert_same_tensor(g, w)
    for p, c, q in zip(py_slots, cpp_slots, path_slots, strict=True):
        assert_same_tensor(p, c)
        assert_same_tensor(c, q)


def test_in_place_and_mutating_ops_mutate_the_callers_tensors() -> None:
    b = es.SpecBuilder()
    t, acc = X.clone(), Y.clone()
    s1 = b.add(co.scale_, (t, 3.0))
    s2 = b.add(co.add_into, (X, acc))
    ex = es.cpp.ProxyExecutor(b.build())
    slots = list(s1.tensor_args)
    ex.call_function(s1.index, s1.int_args, slots)
    assert slots[1] is t and torch.equal(t, X * 3)
    slots2 = list(s2.tensor_args)
    ex.call_function(s2.index, s2.int_args, slots2)
    assert slots2 == [X, acc] and torch.equal(acc, X + Y)


def test_many_nodes_in_one_spec_keep_their_own_plans() -> None:
    b = es.SpecBuilder()
    sites = [b.add(op, args, kwargs) for _, op, args, kwargs in CALLS]
    spec = b.build()
    py, cpp = es.ProxyExecutor(spec), es.cpp.ProxyExecutor(spec)
    assert len(cpp) == len(py) == len(CALLS)
    for site in reversed(sites):
        a, c = list(site.tensor_args), list(site.tensor_args)
        py.call_function(site.index, site.int_args, a)
        cpp.call_function(site.index, site.int_args, c)
        for x, y in zip(a, c, strict=True):
            assert_same_tensor(x, y)


# ---- load time: the same judgement, the same words ----


def _base() -> dict[str, Any]:
    b = es.SpecBuilder()
    b.add(co.kwonly, (X, 5), {"k": 7, "s": 11, "dtype": torch.float16, "mode": "b"})
    b.add(co.list_out, (X, 3))
    return json.loads(es.dumps(b.build()))


def _inputs(d: dict[str, Any]) -> list[Any]:
    return d["nodes"][0]["node"]["inputs"]


def _retype_default(d: dict[str, Any]) -> None:
    _inputs(d).pop(1)
    md = d["nodes"][0]["node"]["metadata"]
    md["externspec.op_schema"] = md["externspec.op_schema"].replace("int p=2", "int p=3")


MUTATIONS = {
    "unknown_op": (es.SpecMismatchError, lambda d: d["nodes"][0]["node"].update(target="externspec_test::nope")),
    "not_an_op_name": (es.SpecMismatchError, lambda d: d["nodes"][0]["node"].update(target="os.system")),
    "torchbind_call": (es.SpecMismatchError, lambda d: d["nodes"][0]["node"].update(target="call_torchbind")),
    "unknown_argument": (es.SpecMismatchError,
                         lambda d: _inputs(d).__setitem__(1, {"name": "pp", "arg": {"as_int": 5}})),
    "missing_argument": (es.SpecMismatchError, lambda d: _inputs(d).pop(0)),
    "reordered_arguments": (es.SpecMismatchError, lambda d: _inputs(d).insert(0, _inputs(d).pop(2))),
    "duplicate_argument": (es.SpecMismatchError, lambda d: _inputs(d).insert(1, _inputs(d)[1])),
    "wrong_member": (es.SpecMismatchError,
                     lambda d: _inputs(d).__setitem__(1, {"name": "p", "arg": {"as_float": 5.0}})),
    "unknown_dtype": (es.SpecMismatchError,
                      lambda d: _inputs(d).__setitem__(5, {"name": "dtype", "arg": {"as_scalar_type": 0}})),
    "bad_c10_enum": (es.SpecMismatchError,
                     lambda d: _inputs(d).__setitem__(5, {"name": "dtype", "arg": {"as_int": 999}})),
    "changed_default": (es.SpecMismatchError, _retype_default),
    "bad_recorded_schema": (es.SpecMismatchError,
                            lambda d: d["nodes"][0]["node"]["metadata"].update({"externspec.op_schema": "((("})),
    "missing_outputs": (es.SpecMismatchError, lambda d: d["nodes"][0]["node"].update(outputs=[])),
    "wrong_output_member": (es.SpecMismatchError,
                            lambda d: d["nodes"][1]["node"].update(outputs=[{"as_tensor": {"name": "b"}}])),
    "two_union_members": (es.DecodeError,
                          lambda d: _inputs(d).__setitem__(1, {"name": "p", "arg": {"as_int": 5, "as_float": 1.0}})),
    "missing_required_field": (es.DecodeError, lambda d: d["nodes"][0]["node"].pop("target")),
    "other_major": (es.VersionError, lambda d: d.update(schema_version={"major": 2, "minor": 0})),
    "newer_minor_with_unknown_key": (es.VersionError, lambda d: (d.update(schema_version={"major": 1, "minor": 5}),
                                                                 d["nodes"][0].update(extra=1))),
}


@pytest.mark.parametrize("case", list(MUTATIONS))
def test_bad_specs_get_the_same_error_from_both_executors(case: str) -> None:
    kind, mutate = MUTATIONS[case]
    doc = _base()
    mutate(doc)
    text = json.dumps(doc)
    with pytest.raises(kind) as py_err:
        es.ProxyExecutor(es.loads(text, es.ExternKernelNodes))
    with pytest.raises(kind) as cpp_err:
        es.cpp.extension().ProxyExecutor(text, {})  # the C++ decoder reads the raw text itself
    if kind is es.VersionError:
        # The generated C++ header's wording may trail Python's advice (", upgrade externspec"):
        # the same statement, possibly without the suffix.
        assert str(py_err.value).startswith(str(cpp_err.value))
    elif case == "torchbind_call":
        assert diverges("torchbind_calls")  # Python refuses the node, C++ checks it as a method call
        assert "torchbind method calls run in the C++ executor only" in str(py_err.value)
        assert str(cpp_err.value).endswith("a torchbind method call takes its object (as_custom_obj) and the "
                                           "method's name (as_string) as its first two inputs")
    else:
        assert str(cpp_err.value) == str(py_err.value)
    if isinstance(py_err.value, es.DecodeError):
        assert cpp_err.value.path == py_err.value.path


@pytest.mark.parametrize("text", ["", "{]", es.dumps(es.ExternKernelNodes(nodes=[]))[:-1], "[]", '{"nodes": 3}'])
def test_truncated_or_malformed_json_is_a_decode_error(text: str) -> None:
    with pytest.raises(es.DecodeError) as py_err:
        es.loads(text, es.ExternKernelNodes)
    with pytest.raises(es.DecodeError) as cpp_err:
        es.cpp.extension().ProxyExecutor(text, {})
    assert cpp_err.value.path == py_err.value.path


def test_decode_error_from_a_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text('{"nodes": [{"name": "buf0"}]}')
    with pytest.raises(es.DecodeError, match=r"spec\.json: \$\.nodes\[0\]: missing required field `node`") as err:
        es.cpp.ProxyExecutor(path)
    assert err.value.path == "$.nodes[0]"
    with pytest.raises(es.DecodeError) as py_err:
        es.ProxyExecutor(path)
    assert str(err.value) == str(py_err.value)


def test_torch_written_unknown_keys_are_ignored() -> None:
    doc = _base()
    del doc["schema_version"]
    doc["nodes"][0]["node"]["future_field"] = 1  # torch-written (unversioned): ignored, as torch does
    ex = es.cpp.extension().ProxyExecutor(json.dumps(doc), {})
    assert len(ex) == 2


# ---- call time: lengths checked before any element is read ----


@pytest.fixture
def spec_and_sites() -> tuple[es.ExternKernelNodes, list[es.CallSite]]:
    b = es.SpecBuilder()
    sites = [b.add(co.kwonly, (X, 5), {"k": 7, "s": 11}), b.add(co.mixed_out, (X, 2)), b.add(co.int_out, (X,))]
    return b.build(), sites


def _call_errors(spec: es.ExternKernelNodes, index: Any, ints: list[int], tensors: list[Any]) -> tuple[str, str]:
    msgs = []
    for ex in (es.ProxyExecutor(spec), es.cpp.ProxyExecutor(spec)):
        with pytest.raises(es.CallError) as err:
            ex.call_function(index, ints, list(tensors))
        msgs.append(str(err.value))
    return msgs[0], msgs[1]


@pytest.mark.parametrize("change", ["extra_int", "missing_int", "extra_tensor", "missing_tensor", "no_arrays"])
def test_wrong_array_lengths_are_call_errors(spec_and_sites, change: str) -> None:
    spec, sites = spec_and_sites
    site = sites[1]
    ints, tensors = list(site.int_args), list(site.tensor_args)
    if change == "extra_int":
        ints.append(1)
    elif change == "missing_int":
        ints.pop()
    elif change == "extra_tensor":
        tensors.append(None)
    elif change == "missing_tensor":
        tensors.pop()
    else:
        ints, tensors = [], []
    py, cpp = _call_errors(spec, site.index, ints, tensors)
    assert cpp == py
    assert "expected 1 input + 3 output tensor slots and 1 input + 1 int-return slots" in cpp


@pytest.mark.parametrize("index", [3, 10**6, 2**40, 2**70, "0", 1.0])
def test_out_of_range_or_non_int_index_is_a_call_error(spec_and_sites, index: Any) -> None:
    spec, sites = spec_and_sites
    with pytest.raises(es.CallError, match="out of range: the spec has 3 nodes"):
        es.cpp.ProxyExecutor(spec).call_function(index, sites[0].int_args, list(sites[0].tensor_args))


def test_negative_index_is_rejected(spec_and_sites) -> None:
    # (The Python executor indexes a list, so -1 silently means the last node; C++ refuses.)
    spec, sites = spec_and_sites
    with pytest.raises(es.CallError, match="index -1 out of range"):
        es.cpp.ProxyExecutor(spec).call_function(-1, sites[2].int_args, list(sites[2].tensor_args))


def test_int_return_differing_from_the_callers_is_a_call_error(spec_and_sites) -> None:
    spec, sites = spec_and_sites
    site = sites[2]
    ints = list(site.int_args)
    ints[-1] += 1  # the compiled caller specialized on another value
    py, cpp = _call_errors(spec, site.index, ints, list(site.tensor_args))
    assert cpp == py and "int return 1 is 33, but the caller expects 34" in cpp


def test_list_return_longer_than_the_spec_is_a_call_error() -> None:
    b = es.SpecBuilder()
    site = b.add(co.list_out, (X, 3))
    doc = json.loads(es.dumps(b.build()))
    doc["nodes"][0]["node"]["outputs"][0]["as_tensors"].pop()  # the spec says 2 outputs, the op makes 3
    spec = es.loads(json.dumps(doc), es.ExternKernelNodes)
    py, cpp = _call_errors(spec, 0, site.int_args, list(site.tensor_args)[:-1])
    assert cpp == py and "is a list of 3 tensors, but the spec has 2 output slots" in cpp


def test_missing_input_tensor_is_a_call_error_not_a_crash(spec_and_sites) -> None:
    spec, sites = spec_and_sites
    tensors = list(sites[0].tensor_args)
    tensors[0] = None
    with pytest.raises(es.CallError, match=r"tensor_args\[0\] \(argument `x`\) should be a Tensor, got NoneType"):
        es.cpp.ProxyExecutor(spec).call_function(0, sites[0].int_args, tensors)
    with pytest.raises(es.CallError, match=r"tensor_args\[0\] \(argument `x`\) should be a Tensor, got str"):
        es.cpp.ProxyExecutor(spec).call_function(0, sites[0].int_args, ["x", None])


def test_op_errors_propagate_with_their_message() -> None:
    b = es.SpecBuilder()
    site = b.add(torch.ops.aten.mm.default, (X, Y.T))
    doc = json.loads(es.dumps(b.build()))
    ex = es.cpp.ProxyExecutor(es.loads(json.dumps(doc), es.ExternKernelNodes))
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        ex.call_function(0, [], [X, X, None])
    slots = list(site.tensor_args)
    ex.call_function(0, [], slots)
    assert torch.equal(slots[2], X @ Y.T)


# ---- the call stack: one per thread, nothing kept past a call ----


def test_a_call_keeps_no_reference_to_its_tensors() -> None:
    """The executor reuses one stack per thread; a call, returned or failed, leaves nothing in it
    (torch keeps a tensor's Python object alive while C++ holds the tensor, so a weak reference
    outliving the call would mean the stack still held it)."""
    b = es.SpecBuilder()
    b.add(torch.ops.aten.mm.default, (X, Y.T))
    ex = es.cpp.ProxyExecutor(b.build())
    a, w = X.clone(), Y.T.clone()
    slots: list[Any] = [a, w, None]
    ex.call_function(0, [], slots)
    assert torch.equal(slots[2], X @ Y.T)
    bad = X.clone()
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        ex.call_function(0, [], [bad, bad, None])
    refs = [weakref.ref(t) for t in (a, w, slots[2], bad)]
    del a, w, slots, bad
    gc.collect()
    assert [r() for r in refs] == [None] * 4


def test_calls_from_many_threads_at_once_get_their_own_results() -> None:
    b = es.SpecBuilder()
    b.add(torch.ops.aten.mul.Tensor, (X, Y))
    cat_ints = b.add(torch.ops.aten.cat.default, ([X, Y, X], 1)).int_args
    ex = es.cpp.ProxyExecutor(b.build())

    def work(seed: int) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]:
        x, y = torch.full((3, 4), float(seed)), torch.full((3, 4), float(-seed))
        done = []
        for _ in range(200):
            mul: list[Any] = [x, y, None]
            ex.call_function(0, [], mul)
            cat: list[Any] = [x, y, x, None]
            ex.call_function(1, cat_ints, cat)
            done.append((x, y, mul[2], cat[3]))
        return done

    with ThreadPoolExecutor(4) as pool:  # call_function releases the GIL: the calls overlap
        results = list(pool.map(work, range(8)))
    for done in results:
        for x, y, mul, cat in done:
            assert torch.equal(mul, x * y) and torch.equal(cat, torch.cat([x, y, x], 1))


class _CallsTheExecutorFromInsideAKernel(TorchDispatchMode):
    """Runs node `index` of `executor` from inside whichever kernel dispatches `addmm`."""

    def __init__(self, executor: Any, site: es.CallSite, slots: list[Any]) -> None:
        super().__init__()
        self.executor, self.site, self.slots = executor, site, slots

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        if func is torch.ops.aten.addmm.default:
            self.executor.call_function(self.site.index, self.site.int_args, self.slots)
        return func(*args, **(kwargs or {}))


def test_a_call_made_from_inside_a_kernel_gets_its_own_stack() -> None:
    """aten::linear's kernel reads its arguments in place on the boxed stack while it calls addmm;
    a call to the executor made from there (here from a dispatch mode, as an op that runs a model
    with this executor would) must not use that stack."""
    b = es.SpecBuilder()
    weight, bias = Y.flip(0), torch.arange(3.0)
    b.add(torch.ops.aten.linear.default, (X, weight, bias))
    cat = b.add(torch.ops.aten.cat.default, ([X, Y, X, Y], 0))
    ex = es.cpp.ProxyExecutor(b.build())
    inner: list[Any] = [X, Y, X, Y, None]
    outer: list[Any] = [X, weight, bias, None]
    with _CallsTheExecutorFromInsideAKernel(ex, cat, inner):
        ex.call_function(0, [], outer)
    assert torch.equal(inner[4], torch.cat([X, Y, X, Y], 0))
    assert torch.equal(outer[3], torch.nn.functional.linear(X, weight, bias))


# ---- torchbind objects, by name ----

FOO_CLASS = "__torch__.torch.classes._TorchScriptTesting._Foo"


@pytest.fixture(scope="module")
def torchbind_lib() -> None:
    torch.ops.load_library(Path(torch.__file__).parent / "lib" / "libtorchbind_test.so")


def _takes_foo_spec(obj_name: str = "_torchbind_obj0", fqn: str = FOO_CLASS) -> es.ExternKernelNodes:
    return es.loads(json.dumps({"nodes": [{"name": "buf0", "node": {
        "target": "_TorchScriptTesting::takes_foo",
        "inputs": [{"name": "foo", "arg": {"as_custom_obj": {"name": obj_name, "class_fqn": fqn}}},
                   {"name": "x", "arg": {"as_tensor": {"name": "arg0_1"}}}],
        "outputs": [{"as_tensor": {"name": "buf1"}}], "metadata": {}}}]}), es.ExternKernelNodes)


def test_custom_objects_are_bound_by_name(torchbind_lib) -> None:
    foo = torch.classes._TorchScriptTesting._Foo(10, 20)
    ex = es.cpp.ProxyExecutor(_takes_foo_spec(), custom_objects={"_torchbind_obj0": foo})
    slots: list[Any] = [X, None]
    ex.call_function(0, [], slots)
    assert torch.equal(slots[1], torch.ops._TorchScriptTesting.takes_foo(foo, X))
    assert not torch.equal(slots[1], X)


def test_custom_object_missing_or_of_another_class_is_a_load_error(torchbind_lib) -> None:
    foo = torch.classes._TorchScriptTesting._Foo(10, 20)
    with pytest.raises(es.SpecMismatchError, match="no custom object named `_torchbind_obj0`"):
        es.cpp.ProxyExecutor(_takes_foo_spec(), custom_objects={"other": foo})
    with pytest.raises(es.SpecMismatchError, match=re.escape("the spec names class `__torch__.torch.classes.ns.Bar`")):
        es.cpp.ProxyExecutor(_takes_foo_spec(fqn="__torch__.torch.classes.ns.Bar"),
                             custom_objects={"_torchbind_obj0": foo})
    queue = torch.classes._TorchScriptTesting._TensorQueue(torch.zeros(1))
    queue_class = "__torch__.torch.classes._TorchScriptTesting._TensorQueue"
    with pytest.raises(es.SpecMismatchError, match=re.escape(f"is a `{queue_class}`")):
        es.cpp.ProxyExecutor(_takes_foo_spec(), custom_objects={"_torchbind_obj0": queue})


def test_a_spec_file_is_size_checked_before_it_is_read(tmp_path) -> None:
    """`es.cpp.ProxyExecutor(path)` applies the size limit before reading (as `es.load` does), and
    bad UTF-8 is the decoder's DecodeError, not Python's UnicodeDecodeError."""
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(es.wire.MAX_JSON_BYTES + 1)  # sparse: nothing is written, and nothing may be read
    too_big = rf"^{re.escape(str(big))}: \$: document of \d+ bytes exceeds the size limit"
    with pytest.raises(es.DecodeError, match=too_big):
        es.cpp.ProxyExecutor(big)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"nodes": [], "x": "\xff"}')
    with pytest.raises(es.DecodeError, match=re.escape(str(bad))):
        es.cpp.ProxyExecutor(bad)
