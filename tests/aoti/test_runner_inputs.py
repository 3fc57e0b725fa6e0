"""The runner's input checks (aoti_runner/input_checks.cpp): inputs of the wrong dtype, rank, size,
strides, device or layout, or with no data behind them (silent garbage, reads past the buffer or
SIGSEGV, before), refused naming the input; packages whose records are missing or not this
library's.

Slow: compiles one small model (cached)."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import externspec as es
from tests.support import cpp_models as cm
from tests.support.artifacts import read_member
from tests.support.package_edits import (
    INPUT_ASSERT,
    as_torch_2_11_writes,
    rewrite,
)

# Every test: no directory the runner extracted outlives what made it (success or failure).
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("extraction_root")]

MODEL = cm.MODELS["runner"]


@pytest.fixture(scope="module", params=["assert_size_stride", "check_input"])
def recorded_runner(request: pytest.FixtureRequest, blob_package: Path,
                    tmp_path_factory: pytest.TempPathFactory) -> es.cpp.AOTIRunner:
    """The blob package's runner, its inputs recorded as torch 2.13 writes them and as 2.11 does."""
    if request.param == "assert_size_stride":
        return es.cpp.AOTIRunner(blob_package, require_input_records=True)
    out = rewrite(blob_package, tmp_path_factory.mktemp("records") / "check_input.pt2", as_torch_2_11_writes)
    assert not INPUT_ASSERT.search(read_member(out, ".wrapper.cpp"))
    return es.cpp.AOTIRunner(out, require_input_records=True)


def _x(n: int = 4) -> torch.Tensor:
    return MODEL.inputs(n)[0]


N = torch.tensor(3)


@pytest.mark.parametrize(("inputs", "match"), [
    (lambda: (_x().double(), N), r"input 0 has dtype Double, the model was compiled for Float"),
    (lambda: (_x().long(), N), r"input 0 has dtype Long, the model was compiled for Float"),
    # int8 for float32: the kernel would read 4x past the buffer
    (lambda: (_x().to(torch.int8), N), r"input 0 has dtype Char, the model was compiled for Float"),
    (lambda: (_x(), N.int()), r"input 1 has dtype Int, the model was compiled for Long"),
    (lambda: (_x()[None], N), r"input 0 has shape \[1, 4, 4\], the model was compiled for \[\*, 4\]"),
    (lambda: (_x(), N[None]), r"input 1 has shape \[1\], the model was compiled for \[\]"),
    (lambda: (torch.randn(4, 3), N), r"input 0 has shape \[4, 3\], the model was compiled for \[\*, 4\]"),
    (lambda: (torch.randn(65, 4), N), r"input 0 has shape \[65, 4\]: size 0 must be at most 64"),
    (lambda: (torch.randn(4, 4).t(), N),
     r"input 0 has strides \[1, 4\], the model was compiled for strides \[4, 1\] \(call \.contiguous\(\) on it\)"),
    (lambda: (torch.randn(4, 1).expand(4, 4), N), r"input 0 has strides \[1, 0\], .* strides \[4, 1\]"),
    (lambda: (torch.randn(8, 8)[::2, ::2], N), r"input 0 has strides \[16, 2\], .* strides \[4, 1\]"),
    (lambda: (torch.empty(4, 4, device="meta"), N), r"input 0 is on meta, the model runs on cpu"),
    (lambda: (_x().to_sparse(), N), r"input 0 has layout Sparse, the model takes strided tensors"),
    (lambda: (torch._neg_view(_x()), N), r"input 0 is a lazy conjugate or negative view"),
    (lambda: (_x(),), r"the model takes 2 inputs, got 1"),
], ids=["float64", "int64", "int8", "int32-for-int64", "rank", "rank-0", "static-size",
        "above-range", "transposed", "stride-0", "strided-view", "meta", "sparse", "neg-view", "count"])
def test_inputs_that_do_not_match_the_package_are_refused_naming_the_input(
        recorded_runner: es.cpp.AOTIRunner, inputs: Callable[[], tuple[Any, ...]], match: str) -> None:
    with pytest.raises(es.CallError, match=match):
        recorded_runner.run_flat(list(inputs()))
    x, n = MODEL.inputs(5)
    torch.testing.assert_close(recorded_runner(x, n)[0], x.sin())


def test_without_lower_bound_checks_a_dynamic_models_check_lines_record_no_rank(blob_package: Path,
                                                                                tmp_path: Path) -> None:
    """Compiled with `aot_inductor.check_lowerbound=False`, a dynamic size without an upper bound
    has no check line, so the lines that are there may not name every dimension: no rank is taken
    from them (torch 2.11's layout, its lower-bound lines removed too)."""
    def edit(name: str, data: bytes) -> tuple[str, bytes]:
        name, data = as_torch_2_11_writes(name, data)
        return name, re.sub(rb"if \(\w+_size\[\d+\] < \d+\) \{", b"if (false) {", data)

    out = rewrite(blob_package, tmp_path / "no_lower_bound.pt2", edit)
    with pytest.warns(UserWarning, match=r"records no dtype or shape for input 0, input 1 in its \*\.wrapper\.cpp"):
        runner = es.cpp.AOTIRunner(out)
    x, n = MODEL.inputs(4)
    torch.testing.assert_close(runner(x, n)[0], x.sin())


def test_a_package_without_input_records_warns_or_is_refused(blob_package: Path, tmp_path: Path) -> None:
    out = rewrite(blob_package, tmp_path / "nosource.pt2",
                   lambda name, d: None if name.endswith(".wrapper.cpp") else (name, d))
    with pytest.warns(UserWarning, match=r"records no dtype or shape for input 0, input 1 \(it has no "
                                         r"\*\.wrapper\.cpp\): only the input count, device, layout and storage"):
        runner = es.cpp.AOTIRunner(out)
    x, n = MODEL.inputs(4)
    torch.testing.assert_close(runner(x, n)[0], x.sin())
    with pytest.raises(es.CallError, match=r"the model takes 2 inputs, got 1"):
        runner.run_flat([x])
    with pytest.raises(es.PackageError, match=r"records no dtype or shape.*require_input_records"):
        es.cpp.AOTIRunner(out, require_input_records=True)


def test_records_under_another_name_than_the_librarys_are_not_used(blob_package: Path, tmp_path: Path) -> None:
    """The library names its inputs (AOTInductorModelContainerGetInputName): a source that takes
    input 0 under another name is not this library's, and what it records is not applied."""
    with zipfile.ZipFile(blob_package) as z:
        source = z.read(next(n for n in z.namelist() if n.endswith(".wrapper.cpp"))).decode()
    var = re.search(r"ConstantHandle (\w+) = ConstantHandle\(input_handles\[0\]\)", source).group(1)  # type: ignore
    other = re.sub(rf"\b{var}\b", var + "_other", source).encode()
    out = rewrite(blob_package, tmp_path / "other.pt2",
                   lambda name, d: (name, other if name.endswith(".wrapper.cpp") else d))
    with pytest.warns(UserWarning, match=r"records no dtype or shape for input 0 in its \*\.wrapper\.cpp"):
        runner = es.cpp.AOTIRunner(out)
    x, n = MODEL.inputs(4)
    torch.testing.assert_close(runner(x, n)[0], x.sin())


class _NoData(torch.Tensor):
    """A `_make_wrapper_subclass` tensor: cpu, float32, the right shape, no data."""

    @staticmethod
    def __new__(cls, *shape: int) -> _NoData:
        return torch.Tensor._make_wrapper_subclass(cls, shape, dtype=torch.float32, device="cpu")  # type: ignore

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        raise NotImplementedError(func)


def _fake(*shape: int) -> torch.Tensor:
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        return torch.empty(*shape)


def _storage_gone(*shape: int) -> torch.Tensor:
    x = torch.randn(*shape)
    x.untyped_storage().resize_(0)
    return x


@pytest.mark.parametrize(("make", "match"), [
    (_fake, r"input 0 is a tensor subclass that dispatches to Python"),
    (_NoData, r"input 0 is a tensor subclass that dispatches to Python"),
    (_storage_gone, r"input 0 reaches past its storage of 0 bytes"),
], ids=["FakeTensor", "wrapper-subclass", "storage-resized-to-0"])
def test_inputs_without_data_are_refused_naming_the_input(runner: es.cpp.AOTIRunner,
                                                          make: Callable[..., torch.Tensor], match: str) -> None:
    """They passed every check and the kernel died with SIGSEGV; eager torch raises."""
    with pytest.raises(es.CallError, match=match):
        runner.run_flat([make(4, 4), N])
