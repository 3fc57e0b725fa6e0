"""A real Triton Inference Server for the tests: PyPI's `nvidia-pytriton` wheel ships `tritonserver`
2.51.0 (it serves on the CPU) with its libraries and Triton's Python backend; `make setup` installs it
(requirements-triton.txt). `TritonServer` starts it on free loopback ports with a backend directory
holding externspec's backend beside Triton's own, waits until it is ready, and stops it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

PYTRITON = Path(sysconfig.get_paths()["purelib"]) / "pytriton"
TRITONSERVER = PYTRITON / "tritonserver" / "bin" / "tritonserver"
LIBS = PYTRITON.parent / "nvidia_pytriton.libs"
TRITON_BACKENDS = PYTRITON / "tritonserver" / "backends"

try:
    from tritonclient.utils import InferenceServerException
except ImportError:  # missing() says why no server runs; the tests that need one are skipped
    InferenceServerException = Exception  # type: ignore[assignment,misc]


def missing() -> str | None:
    """Why no server can start here (None when one can): the reason a test skip names."""
    if not TRITONSERVER.is_file():
        return f"no tritonserver at {TRITONSERVER}: `make setup` installs nvidia-pytriton (requirements-triton.txt)"
    return None


def free_ports(n: int) -> list[int]:
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]


def backend_directory(root: Path, externspec: Path | None = None) -> Path:
    """`root/backends`: externspec's backend (`externspec`'s, a folder `backend_dir()` returned, else
    this checkout's, built once) and Triton's own, side by side."""
    from externspec.triton import backend_dir

    out = root / "backends"
    out.mkdir(parents=True, exist_ok=True)
    (out / "externspec").symlink_to((externspec or backend_dir()) / "externspec")
    for own in TRITON_BACKENDS.iterdir():
        if own.name != "python":
            (out / own.name).symlink_to(own)
    # Triton's Python backend runs each model in a stub process it finds beside its library; the wheel
    # keeps one stub per Python release apart, so the folder is made of links with this Python's.
    python = out / "python"
    python.mkdir()
    for part in (TRITON_BACKENDS / "python").iterdir():
        if part.is_file():
            (python / part.name).symlink_to(part)
    stubs = PYTRITON / "tritonserver" / "python_backend_stubs" / f"{sys.version_info[0]}.{sys.version_info[1]}"
    (python / "triton_python_backend_stub").symlink_to(stubs / "triton_python_backend_stub")
    return out


class TritonServer:
    """One tritonserver process over `repository` (explicit model control: `models` are loaded at start)."""

    def __init__(self, repository: Path, workdir: Path, models: Sequence[str] = (), *,
                 extra_args: Sequence[str] = (), externspec: Path | None = None) -> None:
        self.http_port, self.grpc_port, self.metrics_port = free_ports(3)
        self.repository = repository
        self.log = workdir / "tritonserver.log"
        self.backends = backend_directory(workdir, externspec)
        args = [str(TRITONSERVER), f"--model-repository={repository}", "--model-control-mode=explicit",
                f"--backend-directory={self.backends}", f"--http-port={self.http_port}",
                f"--grpc-port={self.grpc_port}", f"--metrics-port={self.metrics_port}", "--http-address=127.0.0.1",
                "--grpc-address=127.0.0.1", "--allow-metrics=false", "--exit-timeout-secs=10", "--exit-on-error=false",
                *(f"--load-model={m}" for m in models), *extra_args]
        env = {**os.environ, "LD_LIBRARY_PATH": f"{LIBS}:{os.environ.get('LD_LIBRARY_PATH', '')}"}
        with self.log.open("w") as log:
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env)

    @property
    def http_url(self) -> str:
        return f"127.0.0.1:{self.http_port}"

    @property
    def grpc_url(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Until the server answers live (models that failed to load do not stop it)."""
        import tritonclient.http as httpclient

        client = httpclient.InferenceServerClient(self.http_url)
        try:  # closed: its socket, left to the garbage collector, was a ResourceWarning in a later test
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"tritonserver exited ({self.process.returncode}):\n{self.log_tail()}")
                with contextlib.suppress(Exception):
                    if client.is_server_live():
                        return
                time.sleep(0.2)
            raise TimeoutError(f"tritonserver not live after {timeout} s:\n{self.log_tail()}")
        finally:
            client.close()

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> int:
        """SIGTERM, then SIGKILL after 30 s; returns the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


@contextlib.contextmanager
def serving(repository: Path, workdir: Path, models: Sequence[str] = (), *,
            externspec: Path | None = None) -> Iterator[TritonServer]:
    server = TritonServer(repository, workdir, models, externspec=externspec)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def add_model(repository: Path, name: str, package: Path, config: str = "", version: int = 1) -> Path:
    """`repository/name/<version>/model.pt2` (a copy of `package`) and a config.pbtxt of `config`'s lines
    after `backend: "externspec"`."""
    folder = repository / name
    (folder / str(version)).mkdir(parents=True, exist_ok=True)
    shutil.copyfile(package, folder / str(version) / "model.pt2")
    (folder / "config.pbtxt").write_text(f'backend: "externspec"\n{config}')
    return folder


# ---- the clients: one body over tritonclient.http and tritonclient.grpc ----

def _module(kind: str) -> Any:
    if kind == "http":
        import tritonclient.http as module
    else:
        import tritonclient.grpc as module
    return module


def client(kind: str, server: TritonServer) -> Any:
    """A tritonclient InferenceServerClient of `kind` ("http" or "grpc") for `server`."""
    url = server.http_url if kind == "http" else server.grpc_url
    # HTTP: tritonclient's 60 s default for a call's reply ran out on a model load while CI's two
    # workers compiled beside the server (a load probes the package twice); a hang still fails.
    c = _module(kind).InferenceServerClient(url, **({"network_timeout": 300.0} if kind == "http" else {}))
    c.kind = kind
    return c


def _dtype_name(array: np.ndarray) -> str:
    from tritonclient.utils import np_to_triton_dtype

    return str(np_to_triton_dtype(array.dtype))


def infer(c: Any, model: str, inputs: Sequence[np.ndarray], *, names: Sequence[str] | None = None,
          timeout: float = 60.0, outputs: int | None = None) -> list[np.ndarray]:
    """Every output of one request: OUTPUT__0, OUTPUT__1, ... (`outputs` of them, else as many as the
    model's config lists)."""
    module = _module(c.kind)
    names = names or [f"INPUT__{i}" for i in range(len(inputs))]
    request = []
    for name, array in zip(names, inputs, strict=True):
        entry = module.InferInput(name, list(array.shape), _dtype_name(array))
        entry.set_data_from_numpy(np.ascontiguousarray(array))
        request.append(entry)
    kwargs = {"client_timeout": timeout} if c.kind == "grpc" else {}
    result = c.infer(model, request, **kwargs)
    count = len(model_config(c, model)["output"]) if outputs is None else outputs
    return [result.as_numpy(f"OUTPUT__{k}") for k in range(count)]


def model_config(c: Any, model: str) -> dict[str, Any]:
    config = c.get_model_config(model, **({"as_json": True} if c.kind == "grpc" else {}))
    return config["config"] if c.kind == "grpc" else config


def batch_executions(model: str, server: TritonServer) -> dict[int, int]:
    """The server's statistics of `model`: executions by batch size (merged batches are the big ones)."""
    c = client("http", server)
    try:
        stats = c.get_inference_statistics(model)["model_stats"]
    finally:
        c.close()
    counts: dict[int, int] = {}
    for entry in stats:
        for batch in entry.get("batch_stats", []):
            counts[int(batch["batch_size"])] = counts.get(int(batch["batch_size"]), 0) + \
                int(batch["compute_infer"]["count"])
    return counts
