"""The model repository API under traffic, with the real tritonserver and tritonclient: unloading,
loading and reloading a model while clients send requests loses none (each is answered, with its
result or a clear error); a bounded load run of concurrent clients has no error; the server's memory
stays flat over 100 load/unload cycles of a model.

Slow: one server for the module; the cycles take about a minute."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support import matrix, triton_models
from tests.support import triton_server as ts

pytestmark = [pytest.mark.slow, pytest.mark.skipif(ts.missing() is not None, reason=str(ts.missing()))]

MODEL = "flow"
# How the server says a model is not there (unloaded, or loading again): the only errors allowed.
ABSENT = ("unavailable", "not found", "not_found", "not ready", "no available versions")
CLIENTS = 4


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ts.TritonServer]:
    root = tmp_path_factory.mktemp("triton-repository")
    repository = root / "models"
    ops = triton_models.op_libraries(triton_models.es_matrix_library())
    ts.add_model(repository, MODEL, matrix.package("2.15", "lite"), ops + "max_batch_size: 16\n" +
                 triton_models.BATCHER.replace("200000", "2000"))
    with ts.serving(repository, root, [MODEL]) as s:
        yield s


def _inputs(k: int) -> np.ndarray:
    return np.random.default_rng(k).standard_normal((1 + k % 3, 8)).astype(np.float32)


class Traffic:
    """`CLIENTS` threads, each with its own gRPC client, sending requests until stopped; every request's
    outcome is kept: its outputs, or the error's text."""

    def __init__(self, server: ts.TritonServer, kind: str = "grpc") -> None:
        self.server, self.kind = server, kind
        self.stop = threading.Event()
        self.outcomes: list[tuple[int, Any]] = []
        self.sent = 0
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._send, args=(t,)) for t in range(CLIENTS)]

    def _send(self, t: int) -> None:
        c = ts.client(self.kind, self.server)
        k = t
        while not self.stop.is_set():
            with self.lock:
                self.sent += 1
            try:
                outcome: Any = ts.infer(c, MODEL, [_inputs(k)], timeout=30.0, outputs=2)
            except ts.InferenceServerException as e:
                outcome = str(e)
            with self.lock:
                self.outcomes.append((k, outcome))
            k += CLIENTS
        c.close()

    def __enter__(self) -> Traffic:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(60)
        assert not any(t.is_alive() for t in self.threads), "a client is still waiting for an answer"


def _reference(server: ts.TritonServer, ks: set[int]) -> dict[int, list[np.ndarray]]:
    c = ts.client("http", server)
    try:
        return {k: ts.infer(c, MODEL, [_inputs(k)]) for k in ks}
    finally:
        c.close()


def test_unload_load_and_reload_while_requests_flow_lose_no_request(server: ts.TritonServer) -> None:
    control = ts.client("http", server)
    with Traffic(server) as traffic:
        for _ in range(3):
            time.sleep(0.5)
            control.unload_model(MODEL)
            time.sleep(0.5)
            control.load_model(MODEL)
            time.sleep(0.5)
            control.load_model(MODEL)  # a reload of a loaded model
        time.sleep(0.5)
    control.close()
    assert len(traffic.outcomes) == traffic.sent  # every request answered
    ok = [(k, o) for k, o in traffic.outcomes if not isinstance(o, str)]
    errors = [o for _, o in traffic.outcomes if isinstance(o, str)]
    assert ok, "no request succeeded"
    for message in errors:  # only the model's absence, said so
        assert MODEL in message and any(why in message.lower() for why in ABSENT), message
    want = _reference(server, {k for k, _ in ok})
    for k, got in ok:
        for g, w in zip(got, want[k], strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)  # a merged batch rounds its own way


def test_a_bounded_load_run_of_concurrent_clients_has_no_error(server: ts.TritonServer) -> None:
    with Traffic(server) as traffic:
        time.sleep(10)
    errors = [o for _, o in traffic.outcomes if isinstance(o, str)]
    assert errors == []
    assert len(traffic.outcomes) == traffic.sent
    print(f"{len(traffic.outcomes)} requests from {CLIENTS} gRPC clients in 10 s, 0 errors")


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_memory_stays_flat_over_100_load_unload_cycles(server: ts.TritonServer) -> None:
    control = ts.client("http", server)
    x = _inputs(0)

    def cycles(n: int) -> None:
        for _ in range(n):
            control.unload_model(MODEL)
            control.load_model(MODEL)
            ts.infer(control, MODEL, [x])

    cycles(10)  # allocators and caches reach their steady size
    before = _rss_kib(server.process.pid)
    cycles(100)
    after = _rss_kib(server.process.pid)
    control.close()
    growth_mib = (after - before) / 1024
    print(f"tritonserver RSS {before / 1024:.0f} MiB -> {after / 1024:.0f} MiB over 100 load/unload cycles")
    assert growth_mib < 32, f"RSS grew by {growth_mib:.0f} MiB over 100 cycles"
