"""Serving one `.pt2` package with Triton Inference Server (tritonserver 2.51.0 from nvidia-pytriton,
on the CPU): externspec's backend against Triton's Python backend running torch's
`aoti_load_package`, and the Python backend running es.cpp.AOTIRunner. The same package
(tests/packaging/custom_op_package.py: C++ custom ops from an op library mixed with compiled code,
fixed shapes; the cross-version matrix's packages are not used because torch's own runner cannot run
them: "Mismatch between ints consumed and num_ints"), the same server, the same gRPC client (one
prebuilt request sent by client processes, `_cell`); requests from 1, 4 and 16 concurrent clients, each cell
run for SECONDS after a warm-up; every model has 2 instances (the machine has 2 cores). The Python
backend's stub embeds the system's Python (3.11.2 here) and loads the es.cpp build of this
environment's Python (3.11.7): es.cpp's build is keyed by the interpreter's ABI, not its micro release.

    python benchmarks/run.py bench_triton
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sys
import sysconfig
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SECONDS = 5.0
CONCURRENCY = (1, 4, 16)
MODELS = {"externspec": "externspec backend", "py_torch": "Python backend, aoti_load_package",
          "py_es": "Python backend, es.cpp.AOTIRunner"}
TENSORS = ('input [{ name: "INPUT__0", data_type: TYPE_FP32, dims: [3, 4] },'
           ' { name: "INPUT__1", data_type: TYPE_FP32, dims: [3, 4] }]\n'
           'output [{ name: "OUTPUT__0", data_type: TYPE_FP32, dims: [3, 4] },'
           ' { name: "OUTPUT__1", data_type: TYPE_FP32, dims: [3, 4] }]\n')
# numpy 1 for the Python backend's stub (requirements-triton-stub.txt, installed by `make setup`).
STUB_PACKAGES = Path(sys.prefix) / "triton-stub"
INSTANCES = "instance_group [{ count: 2, kind: KIND_CPU }]\n"


def _repository(root: Path) -> Path:
    from tests.packaging import custom_op_package
    from tests.support import triton_models
    from tests.support.triton_server import add_model

    package, library, repository = custom_op_package.package(), custom_op_package.ops_library(), root / "models"
    add_model(repository, "externspec", package, triton_models.op_libraries(library) + INSTANCES)
    ops = root / "load_ops.py"  # what the Python backend's model runs to register the package's ops
    ops.write_text(f"import torch\ntorch.ops.load_library({str(library)!r})\n")
    sys_path = os.pathsep.join(map(str, [STUB_PACKAGES, ROOT / "python", ROOT, sysconfig.get_paths()["purelib"]]))
    for name, runner in [("py_torch", "torch"), ("py_es", "es")]:
        folder = add_model(repository, name, package, TENSORS + INSTANCES +
                           f'parameters [{{ key: "runner" value: {{ string_value: "{runner}" }} }},'
                           f' {{ key: "ops" value: {{ string_value: "{ops}" }} }}]\n')
        (folder / "config.pbtxt").write_text((folder / "config.pbtxt").read_text().replace("externspec", "python"))
        shutil.copyfile(ROOT / "benchmarks" / "triton_python_backend" / "model.py", folder / "1" / "model.py")
        (folder / "1" / "sys_path.txt").write_text(sys_path)
    return repository


def _request(model: str, arrays: list[np.ndarray]) -> object:
    """The gRPC request of one inference, built once: each client sends the same bytes."""
    from tritonclient.grpc import service_pb2

    request = service_pb2.ModelInferRequest(model_name=model)
    for i, array in enumerate(arrays):
        tensor = request.inputs.add()
        tensor.name, tensor.datatype = f"INPUT__{i}", "FP32"
        tensor.shape.extend(array.shape)
        request.raw_input_contents.append(np.ascontiguousarray(array, np.float32).tobytes())
    return request


def _server_cpu_s(pid: int) -> float:
    """CPU seconds of the server and its children (the Python backend's stub processes)."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0.0
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # not a process, or one that ended
            continue
        if entry.name == str(pid) or fields[1] == str(pid):
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _client(url: str, request: bytes, start_at: float, replies: Connection) -> None:
    """One client, a process of its own: a gRPC stub of tritonclient's service sending one prebuilt
    request from `start_at - 1 s` (warm-up) and timing each reply for SECONDS from `start_at`; the
    latencies in seconds go back through `replies`."""
    import grpc
    from tritonclient.grpc import service_pb2, service_pb2_grpc

    message, mine = service_pb2.ModelInferRequest.FromString(request), []
    with grpc.insecure_channel(url) as channel:
        infer = service_pb2_grpc.GRPCInferenceServiceStub(channel).ModelInfer
        while time.monotonic() < start_at:  # warm-up
            infer(message)
        while (now := time.monotonic()) < start_at + SECONDS:
            reply = infer(message)
            mine.append(time.monotonic() - now)
    replies.send(mine if len(reply.raw_output_contents) == 2 else f"a reply without 2 outputs: {reply}")
    replies.close()


def _cell(server: object, model: str, clients: int) -> tuple[float, float, float, float]:
    """(requests/s, p50 ms, p99 ms, server CPU ms per request) of `clients` client processes sending
    for SECONDS. A process per client, not a thread: threads of one Python share its lock, and with 16
    of them a reply waited for the lock (up to the 5 ms switch interval) before its latency was taken,
    so the p99 measured the client. A stub of tritonclient's service, not tritonclient's client: that
    one's own Python work per request (about 0.3 ms of CPU here) outweighed the backend's, and the
    clients share the 2 cores with the server."""
    from tests.packaging import custom_op_package

    request = _request(model, [t.numpy() for t in custom_op_package.example_inputs()]).SerializeToString()  # type: ignore[attr-defined]
    spawn = multiprocessing.get_context("spawn")  # no fork of a process that has run gRPC
    start_at = time.monotonic() + 1.0 + 0.25 * clients  # the processes start within it (CLOCK_MONOTONIC: one clock)
    pipes, processes = [], []
    for _ in range(clients):
        mine, theirs = spawn.Pipe(duplex=False)
        processes.append(spawn.Process(target=_client, args=(server.grpc_url, request, start_at, theirs)))  # type: ignore[attr-defined]
        processes[-1].start()
        theirs.close()
        pipes.append(mine)
    time.sleep(max(0.0, start_at - time.monotonic()))
    cpu = _server_cpu_s(server.process.pid)  # type: ignore[attr-defined]
    time.sleep(max(0.0, start_at + SECONDS - time.monotonic()))
    cpu = _server_cpu_s(server.process.pid) - cpu  # type: ignore[attr-defined]
    latencies: list[float] = []
    for pipe, process in zip(pipes, processes, strict=True):
        got = pipe.recv()
        process.join()
        if isinstance(got, str):
            raise RuntimeError(f"{model}: {got}")
        latencies.extend(got)
    ms = np.array(latencies) * 1000
    return (len(latencies) / SECONDS, float(np.percentile(ms, 50)), float(np.percentile(ms, 99)),
            1000 * cpu / len(latencies))


STAGES = ("queue", "compute_input", "compute_infer", "compute_output")


def _stages(server: object, model: str) -> str:
    """The server's own account of `model`'s requests (its statistics, over every cell): mean µs per
    request waiting in the queue, reading inputs, running, and writing and sending outputs."""
    from tests.support import triton_server as ts

    c = ts.client("http", server)  # type: ignore[arg-type]
    try:
        stats = c.get_inference_statistics(model)["model_stats"][0]["inference_stats"]
    finally:
        c.close()
    count = int(stats["success"]["count"])
    return " | ".join(f"{int(stats[stage]['ns']) / count / 1000:.0f}" for stage in STAGES)


def run() -> list[str]:
    sys.path.insert(0, str(ROOT))
    from tests.support import triton_server as ts

    if ts.missing():
        return [f"bench_triton: skipped: {ts.missing()}"]
    if not (STUB_PACKAGES / "numpy").is_dir():
        return [f"bench_triton: skipped: no {STUB_PACKAGES} (`make setup` installs requirements-triton-stub.txt there)"]
    lines = ["Triton: req/s, p50/p99 ms, the server's CPU ms per request with its stub processes (batch-1 "
             "requests, gRPC; ratios: each / Python backend + torch)",
             f"| {'model':<36} | clients | req/s | p50 ms | p99 ms | server CPU ms/req | req/s ratio | p99 ratio |",
             "|---" * 8 + "|"]
    with tempfile.TemporaryDirectory() as tmp, ts.serving(_repository(Path(tmp)), Path(tmp), list(MODELS)) as server:
        for clients in CONCURRENCY:
            cells = {m: _cell(server, m, clients) for m in MODELS}
            base = cells["py_torch"]
            for m, (rps, p50, p99, cpu) in cells.items():
                lines.append(f"| {MODELS[m]:<36} | {clients:>7} | {rps:5.0f} | {p50:6.2f} | {p99:6.2f} | {cpu:17.3f} | "
                             f"{rps / base[0]:10.2f}x | {p99 / base[2]:8.2f}x |")
        lines += ["", "Inside the server, all cells: µs per request (Triton's statistics)",
                  f"| {'model':<36} | {' | '.join(STAGES)} |", "|---" * (len(STAGES) + 1) + "|"]
        lines += [f"| {MODELS[m]:<36} | {_stages(server, m)} |" for m in MODELS]
    return lines
