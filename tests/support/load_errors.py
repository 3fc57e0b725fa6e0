"""Specs both executors must refuse at load, each with its whole message (tests/abi/test_executor_conformance.py
runs them, tests/abi/test_node_layout.py holds `inspect` to the same refusals), and the small
builders of hand-written and exported specs they are made with."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import torch

import externspec as es
from tests.support import custom_ops as co

X = torch.arange(4.0).reshape(2, 2)
Doc = dict[str, Any]


def built(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> tuple[Doc, es.CallSite]:
    b = es.SpecBuilder()
    site = b.add(op, args, kwargs)
    return json.loads(es.dumps(b.build())), site


def spec_of(doc: Doc) -> es.ExternKernelNodes:
    return es.loads(json.dumps(doc), es.ExternKernelNodes)


def node(target: str, inputs: dict[str, Any], outputs: list[Any]) -> Doc:
    """A one-node spec written by hand (what a hostile file says, no exporter involved)."""
    return {"nodes": [{"name": "buf0", "node": {
        "target": target, "inputs": [{"name": k, "arg": v} for k, v in inputs.items()], "outputs": outputs,
        "metadata": {}}}]}


def with_op_schema(text: str) -> Doc:
    doc, _ = built(torch.ops.aten.relu.default, (X,))
    doc["nodes"][0]["node"]["metadata"]["externspec.op_schema"] = text
    return doc


def with_device_index(index: int) -> Doc:
    doc, _ = built(torch.ops.aten.empty.memory_format, ([2],), {"device": torch.device("cpu", 0)})
    (device,) = [i for i in doc["nodes"][0]["node"]["inputs"] if i["name"] == "device"]
    device["arg"]["as_device"]["index"] = index
    return doc


def duplicate_names() -> Doc:
    b = es.SpecBuilder()
    b.add(co.tuple_out, (X, X))
    b.add(co.tuple_out, (X, X))
    doc = json.loads(es.dumps(b.build()))
    doc["nodes"][1]["name"] = doc["nodes"][0]["name"]
    return doc


def batch_norm(target: str, inputs: dict[str, Any]) -> Doc:
    t = {"as_tensor": {"name": "x"}}
    outs = [{"as_tensor": {"name": f"o{i}"}} for i in range(3)]
    return node(target, {"input": t, "weight": {"as_none": True}, "bias": {"as_none": True}, **inputs,
                         "momentum": {"as_float": 0.1}, "eps": {"as_float": 1e-5}}, outs)


NONE = {"as_none": True}
FALSE = {"as_bool": False}
DENIED = "is denied by the executor's op policy: it"
GUARDED = "refused by the executor's op policy:"
SCHEMA_5000_DEEP = "f(" + "(" * 5000 + "Tensor" + ")" * 5000 + " a) -> Tensor"  # 10 KB: SIGSEGV in torch's parser

# (id, spec, expected SpecMismatchError message). Before this corpus each crashed a process, ran a
# side effect, or was taken silently by one of the executors.
LOAD_ERRORS: list[tuple[str, Callable[[], Doc], str]] = [
    ("from_file", lambda: node("aten::from_file", {"filename": {"as_string": "/etc/passwd"}, "shared": FALSE,
                                                   "size": {"as_int": 64}}, [{"as_tensor": {"name": "o"}}]),
     f"node 0 `buf0` (aten::from_file): op `aten::from_file.default` {DENIED} reads the file the spec names (with "
     "shared=True creates and maps it) (pass allow_ops=[\"aten::from_file\"] to allow it)"),
    ("print", lambda: node("aten::_print", {"s": {"as_string": "hello"}}, [NONE]),
     f"node 0 `buf0` (aten::_print): op `aten::_print.default` {DENIED} writes the spec's text to the process's "
     "stdout (pass allow_ops=[\"aten::_print\"] to allow it)"),
    ("reinterpret_tensor", lambda: node("inductor::_reinterpret_tensor", {
        "self": {"as_tensor": {"name": "x"}}, "size": {"as_ints": [1 << 20]}, "stride": {"as_ints": [1]}},
        [{"as_tensor": {"name": "o"}}]),
     f"node 0 `buf0` (inductor::_reinterpret_tensor): op `inductor::_reinterpret_tensor.default` {DENIED} makes a "
     "view of any size over a tensor's storage, without a bounds check (pass "
     "allow_ops=[\"inductor::_reinterpret_tensor\"] to allow it)"),
    # TorchScript-interpreter-only ops (torch.ops finds them; the dispatcher has no such op).
    ("interpreter_only_set_grad_enabled", lambda: node("aten::set_grad_enabled", {"val": FALSE}, [NONE]),
     "node 0 `buf0` (aten::set_grad_enabled): no op `aten::set_grad_enabled` is registered (load the library that "
     "defines it first)"),
    ("interpreter_only_manual_seed", lambda: node("aten::manual_seed", {"seed": {"as_int": 0}}, [NONE]),
     "node 0 `buf0` (aten::manual_seed): no op `aten::manual_seed` is registered (load the library that defines it "
     "first)"),
    ("interpreter_only_prim", lambda: node("prim::NumToTensor.Scalar", {"a": {"as_float": 1.0}},
                                           [{"as_tensor": {"name": "o"}}]),
     "node 0 `buf0` (prim::NumToTensor.Scalar): no op `prim::NumToTensor.Scalar` is registered, nor any op of "
     "namespace `prim`: load the library that defines namespace `prim` first (AOTIRunnerOptions::op_libraries, "
     "op_libraries=[...] in Python, or torch.ops.load_library)"),
    # A namespace nothing registered: its library was not loaded (the most common custom-op failure).
    ("unregistered_namespace", lambda: node("externspec_nolib::f", {"x": FALSE}, [NONE]),
     "node 0 `buf0` (externspec_nolib::f): no op `externspec_nolib::f` is registered, nor any op of namespace "
     "`externspec_nolib`: load the library that defines namespace `externspec_nolib` first "
     "(AOTIRunnerOptions::op_libraries, op_libraries=[...] in Python, or torch.ops.load_library)"),
    ("op_schema_5000_deep", lambda: with_op_schema(SCHEMA_5000_DEEP),
     "node 0 `buf0` (aten::relu): metadata `externspec.op_schema` nests 5001 levels deep (the limit is 32); it is "
     "not an op schema"),
    ("op_schema_too_long", lambda: with_op_schema("f(" + "Tensor a, " * 2000 + "Tensor z) -> Tensor"),
     "node 0 `buf0` (aten::relu): metadata `externspec.op_schema` is 20021 bytes long (the limit is 16384); it is "
     "not an op schema"),
    ("device_index_256", lambda: with_device_index(256),
     "node 0 `buf0` (aten::empty.memory_format): argument `device` (as_device): device 'cpu':256 is not a torch "
     "device: the index must be 0..127 (c10's DeviceIndex)"),
    ("device_index_128", lambda: with_device_index(128),
     "node 0 `buf0` (aten::empty.memory_format): argument `device` (as_device): device 'cpu':128 is not a torch "
     "device: the index must be 0..127 (c10's DeviceIndex)"),
    ("device_index_-1", lambda: with_device_index(-1),
     "node 0 `buf0` (aten::empty.memory_format): argument `device` (as_device): device 'cpu':-1 is not a torch "
     "device: the index must be 0..127 (c10's DeviceIndex)"),
    ("duplicate_node_names", duplicate_names,
     "nodes 0 and 1 are both named `buf0`; node names must be unique"),
    ("native_batch_norm_eval_without_stats",
     lambda: batch_norm("aten::native_batch_norm", {"running_mean": NONE, "running_var": NONE, "training": FALSE}),
     f"node 0 `buf0` (aten::native_batch_norm): {GUARDED} `running_mean` is None and `training` is False (the "
     "kernel crashes without running stats in eval mode)"),
    ("batch_norm_legit_no_stats_eval",
     lambda: batch_norm("aten::_native_batch_norm_legit.no_stats", {"training": FALSE}),
     f"node 0 `buf0` (aten::_native_batch_norm_legit.no_stats): {GUARDED} `training` is False (the kernel crashes "
     "without running stats in eval mode)"),
    ("batch_norm_no_update_without_stats",
     lambda: batch_norm("aten::_batch_norm_no_update", {"running_mean": NONE, "running_var": NONE}),
     f"node 0 `buf0` (aten::_batch_norm_no_update): {GUARDED} `running_mean` is None (the kernel crashes without "
     "running stats)"),
]
