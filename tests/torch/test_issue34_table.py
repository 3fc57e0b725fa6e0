"""Issue 34's table, re-run by the running torch (CI: 2.13 in `make test`, 2.14 and 2.15 in
`make test-torch2.14` and `make test-torch2.15`): an MLP, TransformerEncoderLayer(32, 4, 64) and
`torch.add(x, y, alpha=3) + 1` on int64, each compiled here in lite mode (every op without a C shim
through the proxy executor) and in default mode, run by es.cpp.AOTIRunner with its C++ executor and
with the Python executor, equal to eager.

A lite package's layout is its release's (docs/torch-compat.md, "The call layout"): torch 2.15's
wrappers pass no omitted kwarg-only default (NODE_ARGUMENTS), 2.11 to 2.14's pass them
(OMITTED_DEFAULTS_PASSED), decided at load from the wrapper's calls. Before 2.15 the int add's lite
package fails in its own generated code under every runner (`matrix.FLOAT_ALPHA`): that cell is a
strict xfail there.

Slow: compiles the packages (cached per torch)."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import externspec as es
from externspec import CallLayout, aoti
from tests.support import matrix, zoo
from tests.support.artifacts import _cached, read_member
from tests.support.package_cache import compile_package

pytestmark = pytest.mark.slow

NEW_LAYOUT = matrix.release_key(matrix.release()) >= (2, 15)
LITE_LAYOUT = CallLayout.NODE_ARGUMENTS if NEW_LAYOUT else CallLayout.OMITTED_DEFAULTS_PASSED
INT_ADD = matrix.CASES["int_add_lite"]

# name -> (module, inputs, dynamic_shapes)
MODELS: dict[str, Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...], Any]]] = {
    "mlp": lambda: (zoo.ZOO["mlp"].module(), zoo.ZOO["mlp"].inputs(0), zoo.ZOO["mlp"].dynamic_shapes),
    "transformer": lambda: (zoo.ZOO["transformer"].module(), zoo.ZOO["transformer"].inputs(0), None),
    "int_add": lambda: (INT_ADD.module(), INT_ADD.make_inputs(4), None),
}


def package(name: str, lite: bool) -> Path:
    def build(path: Path) -> None:
        module, inputs, dynamic = MODELS[name]()
        compile_package(module, inputs, path, dynamic_shapes=dynamic,
                        inductor_configs=dict(torch._inductor.lite_mode_options) if lite else None)

    return _cached(f"issue34_{name}_{'lite' if lite else 'default'}.pt2", build,
                   key_files=(Path(__file__), Path(zoo.__file__), Path(matrix.__file__)))


def _cells() -> list[object]:
    cells = []
    for name in MODELS:
        for lite in (True, False):
            marks = []
            if name == "int_add" and lite and not NEW_LAYOUT:
                marks.append(pytest.mark.xfail(strict=True, raises=es.ModelError, reason=matrix.FLOAT_ALPHA[1]))
            cells.append(pytest.param(name, lite, id=f"{name}-{'lite' if lite else 'default'}", marks=marks))
    return cells


def _python_executor(path: Path) -> es.ProxyExecutor:
    """The Python executor of `path`'s extern calls, given the wrapper's call lengths (a package whose
    model makes none has no extern-kernel file)."""
    with zipfile.ZipFile(path) as z:
        if not any(n.endswith(".wrapper.json") for n in z.namelist()):
            return es.ProxyExecutor(es.ExternKernelNodes(nodes=[]))
    nodes = es.loads(read_member(path, ".wrapper.json"), es.ExternKernelNodes)
    return es.ProxyExecutor(nodes, call_lengths=aoti.wrapper_call_lengths(read_member(path, ".wrapper.cpp").decode()))


@pytest.mark.parametrize("route", ["es.cpp", "python"])
@pytest.mark.parametrize(("name", "lite"), _cells())
def test_the_table_runs_equal_to_eager(name: str, lite: bool, route: str) -> None:
    path = package(name, lite)
    module, inputs, _ = MODELS[name]()
    with torch.no_grad():
        want = module(*inputs)
    runner = es.cpp.AOTIRunner(path)
    if route == "es.cpp":
        got, layout = runner(*inputs), runner.call_layout
    else:
        executor = _python_executor(path)
        (got,) = runner.run_flat_with(executor.call_function, list(inputs))
        layout = executor.call_layout
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    if lite:  # every lite package here has a node whose two layouts differ (addmm's or add's alpha)
        assert layout == LITE_LAYOUT
