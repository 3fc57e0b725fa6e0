"""The runtime device rule (docs/torch-compat.md, "The runtime device"), one body over both
executors: given a runtime device, every `as_device` argument passes it in place of the device the
spec was serialized with, as torch 2.14's proxy executor passes its runner's device; without one,
the serialized device passes. The rule maps devices, so CPU and meta devices test it on any machine."""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch

import externspec as es
from tests.support.executors import Executor

Doc = dict[str, Any]
CUDA_0 = {"type": "cuda", "index": 0}
CPU = {"type": "cpu", "index": None}


def empty_on(device: dict[str, Any] | None) -> Doc:
    """`aten::empty.memory_format([2, 3], device=...)` (`size` takes two int slots)."""
    arg = {"as_none": True} if device is None else {"as_device": device}
    return {"nodes": [{"name": "buf0", "node": {
        "target": "aten::empty.memory_format",
        "inputs": [{"name": "size", "arg": {"as_ints": [2, 3]}}, {"name": "device", "arg": arg, "kind": 2}],
        "outputs": [{"as_tensor": {"name": "o"}}], "metadata": {}}}]}


def run(executor: Executor, doc: Doc, **kwargs: Any) -> torch.Tensor:
    slots: list[Any] = [None]
    executor(es.loads(json.dumps(doc), es.ExternKernelNodes), **kwargs).call_function(0, [2, 3], slots)
    assert slots[0].shape == (2, 3)
    return slots[0]


@pytest.mark.parametrize(("serialized", "runtime", "want"), [
    (CUDA_0, "cpu", "cpu"),                     # compiled on a GPU, run on the CPU
    (CUDA_0, torch.device("meta"), "meta"),     # a torch.device is taken too
    (CPU, "meta", "meta"),                      # the other way: serialized cpu, run elsewhere
    (CPU, None, "cpu"),                         # no runtime device: the serialized one passes
], ids=["cuda0-on-cpu", "cuda0-on-meta", "cpu-on-meta", "cpu-unset"])
def test_runtime_device_replaces_the_serialized_one(executor: Executor, serialized: Doc, runtime: Any,
                                                    want: str) -> None:
    assert run(executor, empty_on(serialized), device=runtime).device == torch.device(want)


def test_a_device_left_none_stays_none(executor: Executor) -> None:
    """Only a serialized device is replaced: `device=None` keeps the op's default (the CPU)."""
    assert run(executor, empty_on(None), device="meta").device == torch.device("cpu")


def test_the_serialized_device_is_still_checked(executor: Executor) -> None:
    """A runtime device does not let an impossible serialized device through."""
    with pytest.raises(es.SpecMismatchError, match=r"argument `device` \(as_device\): device 'cuda':256 is not a "
                                                   r"torch device: the index must be 0\.\.127"):
        run(executor, empty_on({"type": "cuda", "index": 256}), device="cpu")


def test_a_bad_runtime_device_is_named(executor: Executor) -> None:
    with pytest.raises(es.UnsupportedError, match=r"^device 'gpu7' is not a torch device: "):
        run(executor, empty_on(CPU), device="gpu7")


@pytest.mark.parametrize(("device", "match"), [
    ("cuda:257", r"^device 'cuda:257' is not a torch device: the index must be 0\.\.127 \(c10's DeviceIndex\)"),
    ("cuda:128", r"^device 'cuda:128' is not a torch device: the index must be 0\.\.127"),
    ("cpu:1", r"^device 'cpu:1' is not a torch device: the CPU has no device 1"),
], ids=["cuda257", "cuda128", "cpu1"])
def test_a_runtime_device_index_that_would_wrap_is_refused(executor: Executor, device: str, match: str) -> None:
    """Issue 36, item 12: c10 parses the index into an int8: "cuda:257" became cuda:1 in both."""
    with pytest.raises(es.UnsupportedError, match=match):
        run(executor, empty_on(CPU), device=device)


def test_cpu_0_is_the_cpu(executor: Executor) -> None:
    """`cpu:0` is the one CPU (the runner loaded with it refused every CPU input, which has no index)."""
    assert run(executor, empty_on(CUDA_0), device="cpu:0").device == torch.device("cpu")
