"""A model using torch.fft (rfft, a filter, irfft), compiled in lite mode, runs through
es.cpp.AOTIRunner with no `allow_ops`, equal to eager (issue 36, item 14). torch 2.13 calls
`_fft_r2c` and `_fft_c2c` through C shims, but `_fft_c2r` (irfft) has none: it is an extern call,
whose ints the executor checks at each call (op_policy.def, ES_CHECK) instead of running them
unchecked or denying the op."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import externspec as es
from tests.support.artifacts import _cached, read_member
from tests.support.package_cache import compile_package

pytestmark = pytest.mark.slow


class Spectrum(torch.nn.Module):
    """A signal filtered in frequency (rfft, a gain per frequency, irfft), then a linear layer."""

    def __init__(self) -> None:
        super().__init__()
        self.gain = torch.nn.Parameter(torch.rand(9))
        self.fc = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.fft.irfft(torch.fft.rfft(x, dim=-1) * self.gain, n=16, dim=-1))


def _inputs() -> tuple[torch.Tensor]:
    return (torch.randn(3, 16, generator=torch.Generator().manual_seed(0)),)


@pytest.fixture(scope="module")
def package() -> Path:
    def build(path: Path) -> None:
        torch.manual_seed(0)
        compile_package(Spectrum().eval(), _inputs(), path, inductor_configs=dict(torch._inductor.lite_mode_options))

    return _cached("lite_rfft.pt2", build, key_files=(Path(__file__),))


@pytest.mark.parametrize("kind", ["python", "cpp"])
def test_lite_rfft_model_runs_without_allow_ops_equal_to_eager(package: Path, kind: str) -> None:
    nodes = es.loads(read_member(package, ".wrapper.json"), es.ExternKernelNodes)
    assert "aten::_fft_c2r" in {n.node.target.partition(".")[0] for n in nodes.nodes}
    runner = es.cpp.AOTIRunner(package)
    torch.manual_seed(0)
    module = Spectrum().eval()
    with torch.no_grad():
        want = module(*_inputs())
    got = (runner.run_flat(list(_inputs())) if kind == "cpp"
           else runner.run_flat_with(es.ProxyExecutor(nodes).call_function, list(_inputs())))
    assert len(got) == 1
    torch.testing.assert_close(got[0], want, rtol=1e-4, atol=1e-5)
