"""externspec's Triton backend in a real tritonserver (PyPI's nvidia-pytriton, 2.51.0 on the CPU),
answered by the real tritonclient over HTTP and gRPC: outputs equal to eager for torch 2.15's and
2.13's lite packages (both call layouts; the custom op from a C++ op library), a default-mode package,
one with C++ custom ops and one holding a torchbind object (`load_custom_objects`); requests of
different batch sizes merged by Triton's dynamic batcher and split back; models refused at load with
the reason in the repository index while the others serve; request errors naming the input; a failed
extern call naming the node and the op.

Slow: builds the backend and an op library once (cached), and starts one server for the module."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch

from tests.packaging import custom_op_package
from tests.support import matrix, torchbind_models, triton_models
from tests.support import triton_server as ts

pytestmark = [pytest.mark.slow, pytest.mark.skipif(ts.missing() is not None, reason=str(ts.missing()))]

CLIENTS = ("http", "grpc")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ts.TritonServer, dict[str, str]]]:
    root = tmp_path_factory.mktemp("triton")
    repository, reasons = triton_models.write_repository(root)
    names = [*triton_models.serving_models(), *reasons]
    with ts.serving(repository, root, names) as server:
        yield server, reasons


@pytest.fixture(params=CLIENTS)
def client(request: pytest.FixtureRequest, served: tuple[ts.TritonServer, dict[str, str]]) -> Iterator[Any]:
    server, _ = served
    c = ts.client(request.param, server)
    yield c
    c.close()


def _eager_cases() -> list[tuple[str, list[np.ndarray], list[np.ndarray]]]:
    cases = []
    for name, release, case in [("lite215", "2.15", "lite"), ("lite213", "2.13", "lite"),
                                ("lite215_unbatched", "2.15", "lite"), ("default213", "2.13", "default")]:
        record = matrix.recorded(matrix.package(release, case))
        for inputs, outputs in zip(record["inputs"], record["outputs"], strict=True):
            cases.append((name, [t.numpy() for t in inputs], [t.numpy() for t in outputs]))
    x, y = custom_op_package.example_inputs()
    with torch.no_grad():
        want = custom_op_package.MyOps()(x, y)
    cases.append(("my_ops", [x.numpy(), y.numpy()], [t.numpy() for t in want]))
    foo_ops = torchbind_models.MODELS["foo_ops"]  # its classes registered by the package's build
    with torch.no_grad():
        want = foo_ops.make()(*foo_ops.inputs())
    cases.append(("torchbind", [t.numpy() for t in foo_ops.inputs()], [want.numpy()]))
    return cases


def test_every_output_equals_eager(client: Any) -> None:
    for name, inputs, want in _eager_cases():
        got = ts.infer(client, name, inputs)
        assert len(got) == len(want), name
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=f"{name} OUTPUT__{k}")


def test_the_config_is_completed_from_the_package(client: Any) -> None:
    config = ts.model_config(client, "lite213_auto")
    assert config["max_batch_size"] == 4  # dim 0 is dynamic: batching on, Triton's default limit
    assert [(i["name"], i["data_type"], [int(d) for d in i["dims"]]) for i in config["input"]] == \
        [("INPUT__0", "TYPE_FP32", [8])]
    assert [(o["name"], [int(d) for d in o["dims"]]) for o in config["output"]] == [("OUTPUT__0", [4]),
                                                                                  ("OUTPUT__1", [8])]
    assert "dynamic_batching" in config
    assert int(ts.model_config(client, "lite213")["instance_group"][0]["count"]) == 2
    unbatched = ts.model_config(client, "lite215_unbatched")  # a stated 0 is kept: full dims, batch dynamic
    assert int(unbatched.get("max_batch_size", 0)) == 0
    assert [[int(d) for d in i["dims"]] for i in unbatched["input"]] == [[-1, 8]]
    static = ts.model_config(client, "default213")  # x has a dynamic batch, a and b do not
    assert int(static.get("max_batch_size", 0)) == 0
    assert [[int(d) for d in i["dims"]] for i in static["input"]] == [[-1, 8], [3, 5], [3, 5]]


def test_models_that_cannot_load_are_unavailable_with_the_reason(
        served: tuple[ts.TritonServer, dict[str, str]]) -> None:
    server, reasons = served
    c = ts.client("http", server)
    index = {m["name"]: m for m in c.get_model_repository_index()}
    for name, reason in reasons.items():
        assert index[name]["state"] == "UNAVAILABLE", name
        assert reason in index[name]["reason"], (name, index[name]["reason"])
    for name in triton_models.serving_models():
        assert index[name]["state"] == "READY", (name, index[name])
    c.close()


def _error(client: Any, model: str, inputs: list[np.ndarray], names: list[str] | None = None) -> str:
    with pytest.raises(ts.InferenceServerException) as info:
        ts.infer(client, model, inputs, names=names)
    return str(info.value)


def test_request_errors_name_the_input(client: Any) -> None:
    x = np.ones((2, 8), np.float32)
    assert "INPUT__0" in _error(client, "lite215", [x.astype(np.float64)])
    assert "INPUT__0" in _error(client, "lite215", [np.ones((2, 7), np.float32)])
    missing = _error(client, "my_ops", [np.ones((3, 4), np.float32)], names=["INPUT__0"])
    assert "INPUT__1" in missing or "expected 2 inputs" in missing
    extra = _error(client, "lite215", [x, x], names=["INPUT__0", "INPUT__9"])
    assert "INPUT__9" in extra


def test_a_failed_extern_call_names_the_node_and_the_op(client: Any) -> None:
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    message = _error(client, "index_sort", [x, np.array([2, 0, 9], np.int64)])
    assert "index out of range" in message
    assert "index_select" in message and "node" in message, message
    good = ts.infer(client, "index_sort", [x, np.array([2, 0, 3], np.int64)])  # it serves on
    assert good


def test_the_dynamic_batcher_merges_requests_of_different_batch_sizes(
        served: tuple[ts.TritonServer, dict[str, str]]) -> None:
    server, _ = served
    module = matrix.CASES["lite"].module()
    sizes = [1, 2, 3, 1, 2, 3]
    inputs = [np.random.default_rng(n).standard_normal((b, 8)).astype(np.float32) for n, b in enumerate(sizes)]
    before = ts.batch_executions("lite215", server)
    results: list[Any] = [None] * len(sizes)

    def send(k: int) -> None:
        c = ts.client("grpc", server)
        results[k] = ts.infer(c, "lite215", [inputs[k]])
        c.close()

    threads = [threading.Thread(target=send, args=(k,)) for k in range(len(sizes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for k, x in enumerate(inputs):
        with torch.no_grad():
            want = module(torch.from_numpy(x))
        for g, w in zip(results[k], want, strict=True):
            np.testing.assert_allclose(g, w.numpy(), rtol=1e-4, atol=1e-5)
    after = ts.batch_executions("lite215", server)
    merged = {size: n - before.get(size, 0) for size, n in after.items() if n > before.get(size, 0)}
    assert any(size > max(sizes) for size in merged), f"no merged batch: executions by batch size {merged}"
