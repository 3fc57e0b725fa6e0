"""The runner's device and stream options (docs/cuda.md). On a machine without CUDA the CPU-side
rules run (a build without CUDA refuses a CUDA device, a stream is refused on the CPU); the tests
that need a GPU skip with the reason. The full CUDA check is `make gpu-check` (tests/gpu/)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import externspec as es
from externspec._cache import cache_dir
from tests.support import cpp_models as cm

pytestmark = pytest.mark.slow

NO_GPU = "needs a CUDA device and es.cpp built with CUDA (make gpu-check runs the CUDA zoo)"


def cuda_ready() -> bool:
    return bool(es.cpp.extension().with_cuda) and torch.cuda.is_available()


def test_a_build_without_cuda_refuses_a_cuda_device(tmp_path: Path) -> None:
    """Refused before the package is opened, naming the device and why."""
    if es.cpp.extension().with_cuda:
        pytest.skip("this es.cpp was built with CUDA")
    for device in ("cuda", "cuda:1"):
        with pytest.raises(es.UnsupportedError, match=rf"^device '{device}': this build of externspec has no CUDA"):
            es.cpp.AOTIRunner(tmp_path / "absent.pt2", device=device)


def test_a_build_with_cuda_and_no_gpu_names_the_missing_device(tmp_path: Path) -> None:
    if not es.cpp.extension().with_cuda or torch.cuda.is_available():
        pytest.skip("needs es.cpp built with CUDA on a machine without a visible GPU")
    with pytest.raises(es.UnsupportedError, match=r"^device 'cuda': no CUDA device is visible"):
        es.cpp.AOTIRunner(tmp_path / "absent.pt2", device="cuda")


def test_unknown_devices_are_refused(tmp_path: Path) -> None:
    with pytest.raises(es.UnsupportedError, match=r"^device 'gpu' is not a torch device: "):
        es.cpp.AOTIRunner(tmp_path / "absent.pt2", device="gpu")
    with pytest.raises(es.UnsupportedError, match=r"^device 'meta': externspec runs models on cpu or cuda|"
                                                  r"^device 'meta': this build of externspec has no CUDA"):
        es.cpp.AOTIRunner(tmp_path / "absent.pt2", device="meta")


def test_a_cpu_runner_takes_no_stream() -> None:
    runner = es.cpp.AOTIRunner(cm.package("abi"))
    assert runner.device == torch.device("cpu")
    inputs = cm.MODELS["abi"].inputs(4)
    with pytest.raises(TypeError, match=r"stream must be a torch\.cuda\.Stream, got int"):
        runner.run(*inputs, stream=7)
    assert len(runner.run(*inputs, stream=None)) == len(runner(*inputs))


@pytest.mark.skipif(not torch.cuda.is_available(), reason=NO_GPU)
def test_cuda_runner_checks_inputs_and_streams() -> None:
    """A CUDA package: a CPU input is a CallError naming it; a given stream runs the model; a
    stream of another device is refused. (Compiles a small MLP for CUDA.)"""
    if not cuda_ready():
        pytest.skip(NO_GPU)
    from tests.gpu import zoo

    case = zoo.CASES["mlp"]
    package = zoo.compile_case(case, "cuda", lite=False, out_dir=cache_dir() / "gpu")
    runner = es.cpp.AOTIRunner(package, device="cuda")
    inputs = case.inputs("cuda")
    with pytest.raises(es.CallError, match=r"input 0 is on cpu, the model runs on cuda:0"):
        runner(*(t.cpu() for t in inputs))
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        want = case.module.to("cuda")(*inputs)
    got = runner.run(*inputs, stream=stream)
    stream.synchronize()
    torch.testing.assert_close(got, want)
