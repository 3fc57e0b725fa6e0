"""The C++ package runner runs what torch's loader runs, as it does: aliased, repeated and view
outputs (SIGABRT, double free, before), weights in an external blob (SIGSEGV), the model's own
check (its message was lost) and ATen's, a closed runner, dynamic ranges at their edges, and the
model library mapped once per process.

Slow: compiles small models (cached)."""

from __future__ import annotations

import shutil
import threading
import zipfile
from pathlib import Path

import pytest
import torch

import externspec as es
from externspec import _torch_support
from tests.support import cpp_models as cm

# Every test: no directory the runner extracted outlives what made it (success or failure).
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("extraction_root")]

MODEL = cm.MODELS["runner"]


def _x(n: int = 4) -> torch.Tensor:
    return MODEL.inputs(n)[0]


N = torch.tensor(3)


def test_aliased_repeated_and_view_outputs_match_torchs_loader_and_eager(package: Path) -> None:
    ours = es.cpp.AOTIRunner(package)
    theirs = torch._inductor.aoti_load_package(str(package))
    for n in (2, 5, 64):
        inputs = MODEL.inputs(n)
        got, want, eager = ours(*inputs), theirs(*inputs), MODEL.module(*inputs)
        assert len(got) == len(want) == len(eager) == 4
        for i, (g, w, e) in enumerate(zip(got, want, eager, strict=True)):
            assert g.shape == w.shape == e.shape, f"output {i}"
            assert torch.equal(g, w), f"output {i}"
            torch.testing.assert_close(g, e, msg=f"output {i}")
        assert got[0] is got[1]  # `return y, y`: one tensor, owned once
    ours.close()


def test_a_blob_package_keeps_its_weights_beside_the_library(blob_package: Path) -> None:
    names = zipfile.ZipFile(blob_package).namelist()
    assert [n for n in names if n.endswith(".wrapper_weights.blob")]


def test_a_closed_runner_refuses_every_call_saying_it_is_closed(blob_package: Path) -> None:
    """Issue 36, item 9: after close() every call raised AttributeError ('NoneType' ... 'run_flat')."""
    runner = es.cpp.AOTIRunner(blob_package)
    runner.close()
    x, n = MODEL.inputs(4)
    for call in [lambda: runner(x, n), lambda: runner.run_flat([x, n]), lambda: runner.num_inputs,
                 lambda: runner.device, lambda: runner.run_flat_with(lambda *a: None, [x, n])]:
        with pytest.raises(es.CallError, match=r"runner_blob.*: the runner is closed \(AOTIRunner\.close\(\)"):
            call()


def test_a_kept_run_flat_runs_nothing_after_close_and_the_model_is_released(blob_package: Path) -> None:
    """Issue 54 item 9: `run = runner.run_flat` (the hot-loop idiom) kept the model running after
    close(), and the C++ runner was never released. Now the kept method refuses, and the binding's
    object holds no model: its own properties refuse too."""
    runner = es.cpp.AOTIRunner(blob_package)
    run, call, impl = runner.run_flat, runner.__call__, runner._impl
    x, n = MODEL.inputs(4)
    torch.testing.assert_close(run([x, n])[0], x.sin())
    runner.close()
    for closed in [lambda: run([x, n]), lambda: call(x, n), lambda: impl.run_flat([x, n]), lambda: impl.num_inputs,
                   lambda: impl.run_with_python(lambda *a: None, x, n)]:
        with pytest.raises(es.CallError, match=r"runner_blob.*: the runner is closed \(AOTIRunner\.close\(\)"):
            closed()
    runner.close()  # twice is fine


def test_close_during_calls_lets_them_finish(blob_package: Path) -> None:
    """Calls in flight when close() comes finish with their outputs (they hold the model); the
    calls after it refuse."""
    runner = es.cpp.AOTIRunner(blob_package, num_models=2)
    run = runner.run_flat
    x, n = MODEL.inputs(64)
    started, results = threading.Barrier(3), []

    def worker() -> None:
        started.wait()
        for _ in range(200):
            try:
                results.append(torch.allclose(run([x, n])[0], x.sin()))
            except es.CallError:
                results.append("closed")

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    started.wait()
    runner.close()
    for t in threads:
        t.join()
    assert "closed" in results and False not in results, results.count("closed")


def test_the_models_own_check_raises_its_message(runner: es.cpp.AOTIRunner) -> None:
    x, _ = MODEL.inputs(4)
    with pytest.raises(es.ModelError, match=r"the model failed: Expected u0 >= 3 but received 1"):
        runner(x, torch.tensor(1))
    torch.testing.assert_close(runner(x, torch.tensor(3))[0], x.sin())  # still usable


def test_run_flat_takes_any_sequence_and_names_what_is_not_a_tensor(runner: es.cpp.AOTIRunner) -> None:
    x = _x()
    for inputs in ([x, N], (x, N)):
        torch.testing.assert_close(runner.run_flat(inputs)[0], x.sin())
    with pytest.raises(TypeError, match=r"inputs\[1\] must be a Tensor, got int"):
        runner.run_flat([x, 3])
    with pytest.raises(TypeError, match=r"inputs must be a sequence of tensors"):
        runner.run_flat(x.sin)  # type: ignore[arg-type]


def test_views_with_the_compiled_strides_run(runner: es.cpp.AOTIRunner) -> None:
    # A slice of rows keeps the compiled strides: not a copy, and not refused.
    base = torch.randn(10, 4)
    for x in (base[2:5], torch.randn(4, 8)[:, :4].contiguous(), torch.randn(2, 1, 4)[:, 0]):
        torch.testing.assert_close(runner(x, N)[3], MODEL.module(x, N)[3])


def test_a_copied_package_loads_beside_the_first(runner: es.cpp.AOTIRunner, blob_package: Path,
                                                 tmp_path: Path) -> None:
    other = es.cpp.AOTIRunner(shutil.copy(blob_package, tmp_path / "copy.pt2"))
    x = _x(6)
    assert torch.equal(other(x, N)[3], runner(x, N)[3])


def _library_mappings() -> int:
    with open("/proc/self/maps") as f:
        return sum(1 for line in f if "/externspec-aoti-" in line)


def test_loading_the_same_library_again_maps_nothing_new(blob_package: Path, tmp_path: Path) -> None:
    """The library cannot be unmapped (STB_GNU_UNIQUE makes it NODELETE): 1,000 load/close
    cycles added 6,000 mappings and 286 MiB. A copy of the package shares it too."""
    es.cpp.AOTIRunner(blob_package).close()
    once = _library_mappings()
    copy = shutil.copy(blob_package, tmp_path / "copy.pt2")
    x, n = MODEL.inputs(4)
    for path in [blob_package, copy] * 5:
        runner = es.cpp.AOTIRunner(path)
        torch.testing.assert_close(runner(x, n)[0], x.sin())
        runner.close()
    assert _library_mappings() == once


def test_torchs_dynamic_cat_runs_both_edges_of_its_declared_ranges_as_torchs_runner() -> None:
    """test_dynamic_cat: Dim(min=1) writes a minimum of 2 into the wrapper (the compiler's own
    assumption); torch's runner runs size 1, and so must ours. A minimum above 2 is the model's."""
    path = cm.package("cat")
    ours, theirs = es.cpp.AOTIRunner(path), torch._inductor.aoti_load_package(str(path))
    g = torch.Generator().manual_seed(0)
    for a, b, c in [(1, 1, 3), (10, 20, 8), (1, 20, 3), (10, 1, 8)]:
        inputs = [torch.randn(rows, 4, generator=g) for rows in (a, b, c)]
        got, want = ours(*inputs), theirs(*inputs)
        assert torch.equal(got, want)
        assert torch.equal(got, torch.cat(inputs))
    for rows, match in [((11, 1, 3), r"input 0 has shape \[11, 4\]: size 0 must be at most 10"),
                        ((1, 21, 3), r"input 1 has shape \[21, 4\]: size 0 must be at most 20"),
                        ((1, 1, 2), r"input 2 has shape \[2, 4\]: size 0 must be at least 3"),
                        ((1, 1, 9), r"input 2 has shape \[9, 4\]: size 0 must be at most 8")]:
        with pytest.raises(es.CallError, match=match):
            ours.run_flat([torch.randn(r, 4) for r in rows])


def test_a_failing_shim_call_of_the_model_raises_atens_message() -> None:
    """Lite mode compiles `int_tensor + 2` to aoti_torch_cpu_add_Tensor with a float alpha, which
    ATen refuses; the message was "API call failed at wrapper.cpp, line N" only. From torch 2.15 an
    int scalar beside an integral tensor goes through the proxy executor instead (upstream #194262,
    docs/torch-compat.md), and the model runs."""
    runner = es.cpp.AOTIRunner(cm.package("int_add"))
    if _torch_support.minor_release(torch.__version__) >= _torch_support.minor_release("2.15.0"):
        torch.testing.assert_close(runner(torch.arange(4)), torch.arange(4) + 2)
        return
    with pytest.raises(es.ModelError, match=r"the model failed: .*For integral input tensors, argument alpha must "
                                            r"not be a floating point number"):
        runner(torch.arange(4))


def test_a_runner_on_cpu_0_takes_cpu_inputs(blob_package: Path) -> None:
    """Issue 36, item 12: `device="cpu:0"` loaded, then refused every CPU input ("input 0 is on cpu,
    the model runs on cpu:0")."""
    runner = es.cpp.AOTIRunner(blob_package, device="cpu:0")
    assert runner.device == torch.device("cpu")
    x, n = MODEL.inputs(4)
    torch.testing.assert_close(runner(x, n)[0], x.sin())
    with pytest.raises(es.UnsupportedError, match=r"device 'cuda:300' is not a torch device: the index must be"):
        es.cpp.AOTIRunner(blob_package, device="cuda:300")
