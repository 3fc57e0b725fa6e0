"""Input values that compiled kernels trust are checked at the boundary (issue 54 item 1): a bool is
stored as one byte, and a kernel that uses a bool input as an index (`table[m.long()]`) has its
bounds check folded away by the C++ compiler, so a byte of 200 from a client read row 200 of a 2-row
table (server memory in the reply). The runner refuses a bool input holding any byte but 0 or 1,
naming the input, the element and the byte, whoever calls it (Python, C++, Triton: the same check;
tests/triton/test_serving.py sends it over HTTP and gRPC).

Slow: compiles one small model (cached)."""

from __future__ import annotations

import pytest
import torch

import externspec as es
from tests.support import cpp_models as cm

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("extraction_root")]

MODEL = cm.MODELS["bool_index"]


@pytest.fixture(scope="module")
def runner() -> es.cpp.AOTIRunner:
    return es.cpp.AOTIRunner(cm.package("bool_index"))


def bools(raw: list[int]) -> torch.Tensor:
    """A bool tensor of rows of 4 with exactly these bytes (what a client's binary data becomes)."""
    return torch.tensor(raw, dtype=torch.uint8).view(torch.bool).reshape(-1, 4)


def test_valid_bools_run_equal_to_eager(runner: es.cpp.AOTIRunner) -> None:
    for n in (4, 9):
        (m,) = MODEL.inputs(n)
        torch.testing.assert_close(runner(m), MODEL.module(m))


@pytest.mark.parametrize(("raw", "element", "byte"), [
    ([0, 1, 200, 0, 1, 1, 0, 0], 2, 200),  # the finding: row 200 of a 2-row table
    ([255, 0, 0, 0, 0, 0, 0, 0], 0, 255),
    ([1] * 4095 + [2], 4095, 2),  # the last byte of a long input
])
def test_a_bool_byte_other_than_0_or_1_is_refused(runner: es.cpp.AOTIRunner, raw: list[int], element: int,
                                                  byte: int) -> None:
    with pytest.raises(es.CallError, match=rf"input 0 is a bool tensor whose element {element} holds the byte {byte}"):
        runner(bools(raw))
    with pytest.raises(es.CallError, match=rf"holds the byte {byte}"):
        runner.run_flat([bools(raw)])


def test_a_strided_bool_view_is_checked_where_it_reads(runner: es.cpp.AOTIRunner) -> None:
    """A view's bytes outside it are never read by the kernel and not checked; its own are, and the
    element named is the view's."""
    storage = torch.tensor([[1, 7, 0, 7, 1, 7, 0, 7], [0, 7, 0, 7, 1, 7, 1, 7]], dtype=torch.uint8).view(torch.bool)
    view = storage[:, ::2]
    assert not view.is_contiguous()
    torch.testing.assert_close(runner(view.contiguous()), MODEL.module(view.contiguous()))
    with pytest.raises(es.CallError, match=r"input 0 has strides"):
        runner(view)  # compiled for contiguous rows: refused by the stride check, after the values passed
    bad = torch.tensor([[1, 0, 0, 0, 9, 0, 1, 0], [0] * 8], dtype=torch.uint8).view(torch.bool)[:, ::2]
    with pytest.raises(es.CallError, match=r"element 2 holds the byte 9"):
        runner(bad)


@pytest.mark.parametrize("index", [200, 2, -3])
def test_an_int64_index_out_of_range_is_the_models_own_error(index: int) -> None:
    """SECURITY.md's line between the runner and the model: an int64 index feeding a fused kernel is
    bounds-checked by the code Inductor generates, so a bad value is a ModelError, not a read."""
    runner = es.cpp.AOTIRunner(cm.package("int_index"))
    m = torch.tensor([[0, 1, 1, 0], [1, index, 0, 1]])
    with pytest.raises(es.ModelError, match=r"index out of bounds"):
        runner(m)
    good = torch.tensor([[0, 1, 1, 0], [1, 1, 0, 1]])
    torch.testing.assert_close(runner(good), cm.MODELS["int_index"].module(good))
