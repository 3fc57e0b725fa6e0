"""Serving one `.pt2` package with Triton Inference Server (tritonserver 2.51.0 from nvidia-pytriton,
on the CPU): externspec's backend against Triton's Python backend running torch's
`aoti_load_package`, and the Python backend running es.cpp.AOTIRunner. The same package
(tests/packaging/custom_op_package.py: C++ custom ops from an op library mixed with compiled code,
fixed shapes; the cross-version matrix's packages are not used because torch's own runner cannot run
them: "Mismatch between ints consumed and num_ints"), the same server, the same client: Triton's
perf_analyzer of the server's release (tritonclient 2.51.0's binary, `make setup` installs it apart
from the environment's tritonclient: requirements-perf-analyzer.txt), over gRPC with 1, 4 and 16
requests in flight, sending the package's example inputs. Every model has 2 instances (the machine
has 2 cores). The Python backend's stub embeds the system's Python (3.11.2 here) and loads the es.cpp
build of this environment's Python (3.11.7): es.cpp's build is keyed by the interpreter's ABI, not
its micro release.

    python benchmarks/run.py bench_triton
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.support.triton_server import TritonServer

ROOT = Path(__file__).resolve().parents[1]
MEASUREMENT_MS = 3000  # perf_analyzer's window; it measures until 3 windows agree within 10%
CONCURRENCY = (1, 4, 16)
MODELS = {"externspec": "externspec backend", "py_torch": "Python backend, aoti_load_package",
          "py_es": "Python backend, es.cpp.AOTIRunner"}
TENSORS = ('input [{ name: "INPUT__0", data_type: TYPE_FP32, dims: [3, 4] },'
           ' { name: "INPUT__1", data_type: TYPE_FP32, dims: [3, 4] }]\n'
           'output [{ name: "OUTPUT__0", data_type: TYPE_FP32, dims: [3, 4] },'
           ' { name: "OUTPUT__1", data_type: TYPE_FP32, dims: [3, 4] }]\n')
# numpy 1 for the Python backend's stub (requirements-triton-stub.txt, installed by `make setup`).
STUB_PACKAGES = Path(sys.prefix) / "triton-stub"
PERF_ANALYZER = Path(sys.prefix) / "perf-analyzer" / "bin" / "perf_analyzer"
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


def _client_libraries(root: Path) -> dict[str, str]:
    """The environment perf_analyzer runs in: it links libb64 and libcudart by their sonames, which
    no package here installs under those names; nvidia-pytriton ships both for the server, renamed
    (auditwheel), so a folder of links gives them their sonames. No CUDA call is made on the CPU."""
    from tests.support import triton_server as ts

    libs = root / "perf_analyzer_libs"
    libs.mkdir()
    for soname, pattern in [("libb64.so.0d", "libb64-*.so.0d"), ("libcudart.so.12", "libcudart-*.so.12*")]:
        (libs / soname).symlink_to(next(ts.LIBS.glob(pattern)))
    return {**os.environ, "LD_LIBRARY_PATH": str(libs)}


def _input_data(root: Path) -> Path:
    """perf_analyzer's input file: the package's example inputs, sent in every request."""
    from tests.packaging import custom_op_package

    inputs = {f"INPUT__{i}": {"content": t.flatten().tolist(), "shape": list(t.shape)}
              for i, t in enumerate(custom_op_package.example_inputs())}
    (path := root / "inputs.json").write_text(json.dumps({"data": [inputs]}))
    return path


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


def _statistics(server: TritonServer, model: str) -> Any:
    """The server's own account of `model`'s requests since it loaded (Triton's statistics)."""
    from tests.support import triton_server as ts

    c = ts.client("http", server)
    try:
        return c.get_inference_statistics(model)["model_stats"][0]["inference_stats"]
    finally:
        c.close()


def _cell(server: TritonServer, model: str, clients: int, env: dict[str, str], inputs: Path,
          root: Path) -> tuple[float, float, float, float]:
    """(requests/s, p50 ms, p99 ms, server CPU ms per request) of perf_analyzer holding `clients`
    requests in flight over gRPC until 3 windows of MEASUREMENT_MS agree (in throughput and mean
    latency: perf_analyzer's default; with `--percentile 99` they rarely did at 1 client here).
    "server CPU" is over the whole perf_analyzer run, warm-up and windows, per request the server
    answered in it."""
    csv = root / f"{model}-{clients}.csv"
    pid = server.process.pid
    served, cpu = int(_statistics(server, model)["success"]["count"]), _server_cpu_s(pid)
    run = subprocess.run([str(PERF_ANALYZER), "-m", model, "-u", server.grpc_url, "-i", "grpc",
                          "--concurrency-range", str(clients), "-p", str(MEASUREMENT_MS), "--input-data", str(inputs),
                          "-f", str(csv)], env=env, capture_output=True, text=True)
    cpu = _server_cpu_s(pid) - cpu
    served = int(_statistics(server, model)["success"]["count"]) - served
    if run.returncode:
        raise RuntimeError(f"perf_analyzer for {model} at {clients} clients: {run.stdout[-2000:]}{run.stderr[-2000:]}")
    header, row = (line.split(",") for line in csv.read_text().splitlines()[:2])
    got = dict(zip(header, row, strict=True))
    return (float(got["Inferences/Second"]), int(got["p50 latency"]) / 1000, int(got["p99 latency"]) / 1000,
            1000 * cpu / served)


STAGES = ("queue", "compute_input", "compute_infer", "compute_output")


def _stages(server: TritonServer, model: str) -> str:
    """Mean µs per request of `model`, over every cell: waiting in the queue, reading inputs, running,
    and writing and sending outputs."""
    stats = _statistics(server, model)
    count = int(stats["success"]["count"])
    return " | ".join(f"{int(stats[stage]['ns']) / count / 1000:.0f}" for stage in STAGES)


def run() -> list[str]:
    sys.path.insert(0, str(ROOT))
    from tests.support import triton_server as ts

    if ts.missing():
        return [f"bench_triton: skipped: {ts.missing()}"]
    if not (STUB_PACKAGES / "numpy").is_dir():
        return [f"bench_triton: skipped: no {STUB_PACKAGES} (`make setup` installs requirements-triton-stub.txt there)"]
    if not PERF_ANALYZER.is_file():
        return [f"bench_triton: skipped: no {PERF_ANALYZER} (`make setup` installs requirements-perf-analyzer.txt)"]
    lines = ["Triton: req/s, p50/p99 ms, the server's CPU ms per request with its stub processes (batch-1 "
             "requests, gRPC, perf_analyzer; ratios: each / Python backend + torch)",
             f"| {'model':<36} | clients | req/s | p50 ms | p99 ms | server CPU ms/req | req/s ratio | p99 ratio |",
             "|---" * 8 + "|"]
    with tempfile.TemporaryDirectory() as tmp, ts.serving(_repository(Path(tmp)), Path(tmp), list(MODELS)) as server:
        env, inputs = _client_libraries(Path(tmp)), _input_data(Path(tmp))
        for clients in CONCURRENCY:
            cells = {m: _cell(server, m, clients, env, inputs, Path(tmp)) for m in MODELS}
            base = cells["py_torch"]
            for m, (rps, p50, p99, cpu) in cells.items():
                lines.append(f"| {MODELS[m]:<36} | {clients:>7} | {rps:5.0f} | {p50:6.2f} | {p99:6.2f} | {cpu:17.3f} | "
                             f"{rps / base[0]:10.2f}x | {p99 / base[2]:8.2f}x |")
        lines += ["", "Inside the server, all cells: µs per request (Triton's statistics)",
                  f"| {'model':<36} | {' | '.join(STAGES)} |", "|---" * (len(STAGES) + 1) + "|"]
        lines += [f"| {MODELS[m]:<36} | {_stages(server, m)} |" for m in MODELS]
    return lines
