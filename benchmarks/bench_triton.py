"""Serving one `.pt2` package with Triton Inference Server (tritonserver 2.51.0 from nvidia-pytriton,
on the CPU): externspec's backend against Triton's Python backend running torch's
`aoti_load_package`. The same package (tests/packaging/custom_op_package.py: C++ custom ops from an
op library mixed with compiled code, fixed shapes; the cross-version matrix's packages are not used
because torch's own runner cannot run them: "Mismatch between ints consumed and num_ints"), the same
server, the same gRPC client; requests from 1, 4 and 16 concurrent clients, each cell run for SECONDS
after a warm-up; every model has 2 instances (the machine has 2 cores).

    python benchmarks/run.py bench_triton
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SECONDS = 5.0
CONCURRENCY = (1, 4, 16)
# The Python backend running es.cpp.AOTIRunner (the third column) is not here yet: the wheel's
# stub embeds the system's libpython 3.11.2, not the environment's Python (3.11.7 here), and es.cpp's
# build folder is keyed by the Python micro release, so the stub began a full build of es.cpp.
MODELS = {"externspec": "externspec backend", "py_torch": "Python backend, aoti_load_package"}
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
    for name, runner in [("py_torch", "torch")]:
        folder = add_model(repository, name, package, TENSORS + INSTANCES +
                           f'parameters [{{ key: "runner" value: {{ string_value: "{runner}" }} }},'
                           f' {{ key: "ops" value: {{ string_value: "{ops}" }} }}]\n')
        (folder / "config.pbtxt").write_text((folder / "config.pbtxt").read_text().replace("externspec", "python"))
        shutil.copyfile(ROOT / "benchmarks" / "triton_python_backend" / "model.py", folder / "1" / "model.py")
        (folder / "1" / "sys_path.txt").write_text(sys_path)
    return repository


def _cell(server: object, model: str, clients: int) -> tuple[float, float, float]:
    """(requests/s, p50 ms, p99 ms) of `clients` threads sending for SECONDS."""
    from tests.packaging import custom_op_package
    from tests.support import triton_server as ts

    x = [t.numpy() for t in custom_op_package.example_inputs()]
    latencies: list[float] = []
    lock, start_at = threading.Lock(), time.monotonic() + 1.0

    def client() -> None:
        c = ts.client("grpc", server)  # type: ignore[arg-type]
        mine = []
        while time.monotonic() < start_at:  # warm-up
            ts.infer(c, model, x, outputs=2)
        while (now := time.monotonic()) < start_at + SECONDS:
            ts.infer(c, model, x, outputs=2)
            mine.append(time.monotonic() - now)
        c.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ms = np.array(latencies) * 1000
    return len(latencies) / SECONDS, float(np.percentile(ms, 50)), float(np.percentile(ms, 99))


def run() -> list[str]:
    sys.path.insert(0, str(ROOT))
    from tests.support import triton_server as ts

    if ts.missing():
        return [f"bench_triton: skipped: {ts.missing()}"]
    if not (STUB_PACKAGES / "numpy").is_dir():
        return [f"bench_triton: skipped: no {STUB_PACKAGES} (`make setup` installs requirements-triton-stub.txt there)"]
    lines = ["Triton: req/s, p50/p99 ms (batch-1 requests, gRPC; ratios: externspec / Python backend + torch)",
             f"| {'model':<36} | clients | req/s | p50 ms | p99 ms | req/s ratio | p99 ratio |", "|---" * 7 + "|"]
    with tempfile.TemporaryDirectory() as tmp, ts.serving(_repository(Path(tmp)), Path(tmp), list(MODELS)) as server:
        for clients in CONCURRENCY:
            cells = {m: _cell(server, m, clients) for m in MODELS}
            base = cells["py_torch"]
            for m, (rps, p50, p99) in cells.items():
                lines.append(f"| {MODELS[m]:<36} | {clients:>7} | {rps:5.0f} | {p50:6.2f} | {p99:6.2f} | "
                             f"{rps / base[0]:10.2f}x | {p99 / base[2]:8.2f}x |")
    return lines
