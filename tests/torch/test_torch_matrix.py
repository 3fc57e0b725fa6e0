"""The cross-version matrix (docs/torch-compat.md, "The cross-version matrix"): the packages every
supported torch compiled (tests/data/matrix/<release>/, tests/support/matrix.py) run under the torch
running the tests, through es.cpp.AOTIRunner with its C++ executor and with the Python executor, equal
to the eager outputs recorded by the torch that compiled them. A package whose model library calls
C-shim functions this libtorch lacks is refused at load with a PackageError naming both releases.

CI runs this file in each torch environment it makes (2.13, 2.14, 2.15; the GPU machine's 2.11 in
`make gpu-sim`), so every row of the matrix is checked.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
import torch

import externspec as es
from externspec import CallLayout, _torch_support, aoti
from tests.support import matrix
from tests.support.artifacts import read_member, replace_member

pytestmark = pytest.mark.slow

RELEASE = matrix.release()
SUPPORTED = _torch_support.supported_releases(_torch_support.requirement())


def test_every_supported_release_compiled_every_case() -> None:
    writers = {writer for writer, _, _ in matrix.packages()}
    assert writers == set(SUPPORTED)
    for writer, _, path in matrix.packages():
        assert path.is_file() and matrix.eager_path(path).is_file(), path
        assert matrix.release(json.loads((path.parent / "torch.json").read_text())["torch"]) == writer


def test_the_shim_table_holds_for_this_torch() -> None:
    """Every C-shim function the runner's table gives a release up to this one is in this libtorch; no
    later one is."""
    libtorch = matrix.libtorch()
    table = matrix.release_names("kImport")
    assert table and set(table.values()) <= set(SUPPORTED)
    for function, since in table.items():
        assert hasattr(libtorch, function) == (matrix.release_key(since) <= matrix.release_key(RELEASE)), function


def test_each_package_is_dated_to_its_release_or_before() -> None:
    """The names a model library imports and exports date it to the release that compiled it, exactly
    from 2.13 on (each release adds entry points or shim functions its libraries use), and 2.11 or 2.12
    before (2.12 adds no entry point, and these packages call none of its new shim functions)."""
    for writer, _, path in matrix.packages():
        dated = matrix.dated_release(path)
        assert dated == writer if matrix.release_key(writer) >= (2, 13) else dated == "2.11", (path, dated)


def _cells() -> list[object]:
    cells = []
    for w, c, p in matrix.packages():
        known = matrix.KNOWN_FAILING.get((w, c))
        marks = [pytest.mark.xfail(strict=True, raises=getattr(es, known[0]), reason=known[1])] if known else []
        if matrix.release_key(w) < (2, 13):  # docs/torch-compat.md: no input records, which the runner says
            marks.append(pytest.mark.filterwarnings("ignore:.*the package records no dtype or shape:UserWarning"))
        cells.append(pytest.param(w, p, id=f"{w}-{c}", marks=marks))
    return cells


@pytest.mark.parametrize("route", ["es.cpp", "python"])
@pytest.mark.parametrize(("writer", "package"), _cells())
def test_package_of_every_release_runs_here_equal_to_eager(writer: str, package: Path, route: str) -> None:
    matrix.check(writer, package, route)


def test_a_shim_function_this_torch_lacks_is_refused_at_load(tmp_path: Path) -> None:
    """A model library importing a C-shim function that no torch exports (torch 2.13's grid_sampler_3d
    package with that import renamed) is refused before the dynamic loader's `undefined symbol`, naming
    this torch and the function, through both executors' route."""
    package = matrix.DATA / "2.13" / "shim.pt2"
    library = read_member(package, ".wrapper.so")
    real, unknown = b"aoti_torch_cpu_grid_sampler_3d\0", b"aoti_torch_cpu_grid_sampler_9d\0"
    assert real in library  # in the dynamic string table (and the static one)
    patched = replace_member(package, ".wrapper.so", library.replace(real, unknown), tmp_path / "shim.pt2")
    (tmp_path / "shim.eager.pt").write_bytes(matrix.eager_path(package).read_bytes())
    for route in ("es.cpp", "python"):
        with pytest.raises(es.PackageError) as info:
            matrix.run(patched, route)
        assert str(info.value).startswith(f"{patched}!")
        assert (f": its model library calls C-shim functions that neither torch {RELEASE} nor any library loaded "
                "in this process provides: ") in str(info.value)
        assert "load that library first (op_libraries)" in str(info.value)
        assert "aoti_torch_cpu_grid_sampler_9d (in no torch release externspec knows)" in str(info.value)


NO_RECORDS = "ignore:.*the package records no dtype or shape:UserWarning"


@pytest.mark.filterwarnings(NO_RECORDS)
def test_each_package_is_laid_out_as_its_release_wrote_it() -> None:
    """docs/torch-compat.md, "The call layout": the calls a package's wrapper states decide its layout
    at load, read by both parsers (the runner's wrapper_calls.cpp, `aoti.wrapper_call_lengths`): torch
    2.15's packages are NODE_ARGUMENTS, the earlier releases' OMITTED_DEFAULTS_PASSED (the `default` and
    `lite` cases have nodes whose two layouts differ: addmm's beta and alpha, the custom op's k and s)."""
    for writer, case, path in matrix.packages():
        if case not in ("default", "lite"):
            continue
        new = matrix.release_key(writer) >= (2, 15)
        want = CallLayout.NODE_ARGUMENTS if new else CallLayout.OMITTED_DEFAULTS_PASSED
        assert es.cpp.AOTIRunner(path).call_layout == want, path
        spec = es.loads(read_member(path, ".wrapper.json"), es.ExternKernelNodes)
        lengths = aoti.wrapper_call_lengths(read_member(path, ".wrapper.cpp").decode())
        assert es.ProxyExecutor(spec, call_lengths=lengths).call_layout == want, path


def test_a_wrapper_call_matching_no_layout_is_refused_at_load(tmp_path: Path) -> None:
    """torch 2.13's lite package with its first addmm call edited to pass one int: both parsers and
    both executors refuse it at load, naming the node and both layouts' lengths."""
    package = matrix.DATA / "2.13" / "lite.pt2"
    source = read_member(package, ".wrapper.cpp").decode()
    call = "aoti_torch_proxy_executor_call_function(proxy_executor, 1, 2, std::array<int64_t, 2>{1, 1}.data()"
    assert source.count(call) == 1
    edited = source.replace(call, "aoti_torch_proxy_executor_call_function(proxy_executor, 1, 1, "
                                  "std::array<int64_t, 1>{1}.data()")
    patched = replace_member(package, ".wrapper.cpp", edited.encode(), tmp_path / "lite.pt2")
    message = (r"^node 1 `\w+` \(aten::addmm\): its call in the package's wrapper passes 4 tensors and 1 ints, which "
               r"match neither of its call layouts \(NODE_ARGUMENTS: 4 tensors and 0 ints; OMITTED_DEFAULTS_PASSED: 4 "
               r"tensors and 2 ints\)$")
    with pytest.raises(es.SpecMismatchError, match=message):
        es.cpp.AOTIRunner(patched)
    spec = es.loads(read_member(package, ".wrapper.json"), es.ExternKernelNodes)
    with pytest.raises(es.SpecMismatchError, match=message):
        es.ProxyExecutor(spec, call_lengths=aoti.wrapper_call_lengths(edited))


@pytest.mark.filterwarnings(NO_RECORDS)
def test_a_package_without_its_wrapper_source_is_decided_by_its_first_call(tmp_path: Path) -> None:
    """Without `*.wrapper.cpp` the runner loads undecided, and the model's first call of a node whose
    layouts differ decides: torch 2.15's lite package runs equal to eager."""
    package = matrix.DATA / "2.15" / "lite.pt2"
    bare = tmp_path / "lite.pt2"
    with zipfile.ZipFile(package) as src, zipfile.ZipFile(bare, "w") as dst:
        for info in src.infolist():
            if not info.filename.endswith(".wrapper.cpp"):
                dst.writestr(info, src.read(info.filename))
    runner = es.cpp.AOTIRunner(bare)
    assert runner.call_layout is None
    recorded = torch.load(matrix.eager_path(package))
    got, want = runner(*recorded["inputs"][0]), recorded["outputs"][0]
    torch.testing.assert_close(list(got) if isinstance(got, (tuple, list)) else [got],
                               list(want) if isinstance(want, (tuple, list)) else [want], rtol=1e-4, atol=1e-5)
    assert runner.call_layout == CallLayout.NODE_ARGUMENTS
