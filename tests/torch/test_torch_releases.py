"""What each supported torch writes (docs/torch-compat.md, "What torch 2.14 writes", "What torch 2.11
and 2.12 write"), checked on packages the running torch compiles, and packages of the other supported
torch run under this one.

Every fact is a row per release; the test reads the running torch's row, so CI checks the 2.13 row
in its 2.13 environment and the 2.14 and 2.15 rows in theirs (`make test-torch2.14`, `make
test-torch2.15`); the 2.11 and 2.12 rows were checked in environments of those releases (the file
run there by hand). The
packages are the tests' own (tests/support/: the runner model with weights in the library and in a
blob, aliased and view outputs; the lite-mode zoo), cached per torch version.
"""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest
import torch
from torch.utils import _pytree as pytree

import externspec as es
from externspec import CallLayout, _torch_support
from tests.support import cpp_models as cm
from tests.support import matrix, zoo
from tests.support.artifacts import read_member
from tests.support.paths import REPO

pytestmark = pytest.mark.slow

RELEASE = ".".join(map(str, _torch_support.minor_release(torch.__version__)))
SUPPORTED = _torch_support.supported_releases(_torch_support.requirement())

# torch._export.serde.schema.SCHEMA_VERSION: the export schema the IDL mirrors.
EXPORT_SCHEMA = {"2.11": (8, 17), "2.12": (8, 20), "2.13": (8, 20), "2.14": (8, 20), "2.15": (8, 20)}
# The package archive's `.data/version` and the keys of `*.wrapper_metadata.json`.
ARCHIVE_VERSION = {"2.11": "6", "2.12": "6", "2.13": "6", "2.14": "6", "2.15": "6"}
METADATA_KEYS = {r: ["AOTI_COMPUTE_CAPABILITY", "AOTI_CPU_ISA", "AOTI_DEVICE_KEY", "AOTI_MACHINE", "AOTI_PLATFORM"]
                 for r in ("2.11", "2.12", "2.13", "2.14", "2.15")}
# C entry points of the model library that a release's AOTInductor adds (torch 2.14's loader looks
# them up and warns when a 2.13 library lacks them; both loaders run either library).
ENTRY_POINTS_SINCE = {
    "2.13": {"AOTInductorGetLastError", "AOTInductorModelContainerExtractConstantsMapEntries",
             "AOTInductorModelContainerUpdateConstantBufferFromCpu",
             "AOTInductorModelContainerUpdateConstantBufferFromCpuPairs",
             "AOTInductorModelContainerUpdateConstantBufferPairs",
             "AOTInductorModelContainerUpdateInactiveConstantBufferPairs", "AOTInductorModelCreateV2",
             "AOTInductorModelUpdateConstantsMapV2"},
    "2.14": {"AOTInductorModelContainerCreateWithExternalConstants", "AOTInductorModelContainerDidCallLoadConstants",
             "AOTInductorSetPinnedAsyncConstantsCopyStageBufferBytes", "AOTInductorSetUsePinnedAsyncConstantsCopy"},
    "2.15": {"AOTInductorModelContainerGetStreamAffinityModelIndexForTesting",
             "AOTInductorModelContainerSetUseStreamAffinity", "AOTInductorSetPinnedAsyncConstantsCopyCpuThreads"},
}
# Whether the wrapper ignores the proxy executor's status (a bare `aoti_torch_proxy_executor_call_function(...);`
# where 2.13 wraps it in AOTI_TORCH_ERROR_CODE_CHECK): the model then runs on after a failed extern call.
IGNORES_EXECUTOR_STATUS = {"2.11": True, "2.12": True, "2.13": False, "2.14": False, "2.15": False}
# The ints a lite-mode wrapper passes for an addmm node without beta/alpha: their defaults up to 2.14
# (OMITTED_DEFAULTS_PASSED), none from 2.15 (NODE_ARGUMENTS; docs/torch-compat.md, "The call layout").
ADDMM_DEFAULT_INTS = {"2.11": [1, 1], "2.12": [1, 1], "2.13": [1, 1], "2.14": [1, 1], "2.15": []}
# The environments of the supported torch releases this checkout makes (`make setup`,
# `make setup-torch2.14`), whose packages the others run. Not yet 2.15's: the runner model it compiles
# comes out specialized to its example batch (4), so the others' check at batches 2 and 5 fails.
VENVS = {"2.13": REPO / ".venv", "2.14": REPO / ".venv-torch2.14", "2.15": REPO / ".venv-torch2.15"}


def test_the_facts_cover_every_supported_release() -> None:
    assert set(EXPORT_SCHEMA) == set(ARCHIVE_VERSION) == set(METADATA_KEYS) == set(IGNORES_EXECUTOR_STATUS) \
        == set(ADDMM_DEFAULT_INTS) == set(SUPPORTED)
    assert set(VENVS) <= set(SUPPORTED)
    assert RELEASE in SUPPORTED


def test_export_schema_version_is_the_one_the_idl_mirrors() -> None:
    from torch._export.serde.schema import SCHEMA_VERSION

    assert EXPORT_SCHEMA[RELEASE] == SCHEMA_VERSION
    assert SCHEMA_VERSION[0] == es.TORCH_EXPORT_SCHEMA_MAJOR


def _members(path: Path) -> list[str]:
    return zipfile.ZipFile(path).namelist()


def test_package_layout_archive_version_and_metadata_keys() -> None:
    path = cm.package("runner_blob")
    names = _members(path)
    suffixes = sorted(n.rsplit("/", 1)[-1].split(".", 1)[-1] for n in names if "/aotinductor/model/" in n)
    assert suffixes == ["kernel.cpp", "kernel_metadata.json", "wrapper.cpp", "wrapper.so", "wrapper_metadata.json",
                        "wrapper_weights.blob"]
    (version,) = [n for n in names if n.endswith("/.data/version")]
    assert read_member(path, "/.data/version").decode().strip() == ARCHIVE_VERSION[RELEASE], version
    assert sorted(json.loads(read_member(path, ".wrapper_metadata.json"))) == METADATA_KEYS[RELEASE]


def _exported_symbols(package: Path, tmp_path: Path) -> set[str]:
    library = tmp_path / "model.so"
    library.write_bytes(read_member(package, ".wrapper.so"))
    out = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def test_model_library_entry_points_of_the_release(tmp_path: Path) -> None:
    symbols = _exported_symbols(cm.package("runner"), tmp_path)
    for release, added in ENTRY_POINTS_SINCE.items():
        present = added & symbols
        since = _torch_support.minor_release(f"{release}.0")
        assert present == (added if _torch_support.minor_release(torch.__version__) >= since else set()), release


def test_lite_mode_wrapper_passes_omitted_kwarg_only_defaults_as_its_release_does() -> None:
    """docs/torch-compat.md's rule: addmm's node has no beta/alpha, the wrapper passes {1, 1} up to
    2.14 and nothing from 2.15; torch's own runner fails on the MLP and the transformer layer up to
    2.14 (and runs them from 2.15), externspec's runs them equal to eager, the layout decided at load."""
    for name in ("mlp", "transformer"):
        path = zoo.lite_package(name)
        nodes = es.loads(read_member(path, ".wrapper.json"), es.ExternKernelNodes)
        addmm = [i for i, n in enumerate(nodes.nodes) if n.node.target == "aten::addmm"]
        assert addmm and all({a.name for a in nodes.nodes[i].node.inputs} == {"self", "mat1", "mat2"} for i in addmm)
        source = read_member(path, ".wrapper.cpp").decode()
        ints = ADDMM_DEFAULT_INTS[RELEASE]
        array = f"{len(ints)}, std::array<int64_t, {len(ints)}>{{{', '.join(map(str, ints))}}}"
        for i in addmm:
            assert f"aoti_torch_proxy_executor_call_function(proxy_executor, {i}, {array}" in source
        model = zoo.ZOO[name]
        inputs = model.inputs(1 if model.dynamic else 0)
        with torch.no_grad():
            want = model.module()(*inputs)
        zoo.assert_torchs_runner_as_its_release_does(path, inputs, want)
        runner = es.cpp.AOTIRunner(path)
        assert runner.call_layout == (CallLayout.OMITTED_DEFAULTS_PASSED if ints else CallLayout.NODE_ARGUMENTS)
        torch.testing.assert_close(runner(*inputs), want, rtol=1e-4, atol=1e-5)


def _other_release_packages(release: str) -> dict[str, Path]:
    """The packages the other supported torch compiles (in its own environment; cached there)."""
    python = VENVS[release] / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no torch {release} environment in this checkout ({VENVS[release].name}: make setup"
                    f"{'' if release == '2.13' else '-torch' + release}); CI makes it before running this file there")
    code = ("import json; from tests.support import cpp_models as cm, zoo; "
            "print(json.dumps({'runner_blob': str(cm.package('runner_blob')), 'mlp': str(zoo.lite_package('mlp'))}))")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run([str(python), "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return {k: Path(v) for k, v in json.loads(proc.stdout.splitlines()[-1]).items()}


@pytest.mark.parametrize("writer", [r for r in VENVS if r != RELEASE])
def test_packages_of_the_other_release_run_here(writer: str) -> None:
    """A package compiled by the other supported torch loads and runs under this one, in torch's
    loader and in es.cpp (the model library calls torch through its stable C shim)."""
    packages = _other_release_packages(writer)
    model = cm.MODELS["runner_blob"]
    ours, theirs = es.cpp.AOTIRunner(packages["runner_blob"]), torch._inductor.aoti_load_package(
        str(packages["runner_blob"]))
    for n in (2, 5):
        inputs = model.inputs(n)
        for got, want, eager in zip(ours(*inputs), theirs(*inputs), model.module(*inputs), strict=True):
            assert torch.equal(got, want)
            torch.testing.assert_close(got, eager)
    mlp = zoo.ZOO["mlp"]
    with torch.no_grad():
        torch.testing.assert_close(es.cpp.AOTIRunner(packages["mlp"])(*mlp.inputs(1)), mlp.module()(*mlp.inputs(1)),
                                   rtol=1e-4, atol=1e-5)


def _older(release: str, name: str) -> Path:
    path = matrix.package(release, name)
    assert path.exists(), f"{path} is missing: tests/support/matrix.py says how it is made"
    return path


def _run(kind: str, path: Path, inputs: tuple[torch.Tensor, ...]) -> list[torch.Tensor]:
    """The package at `path` run by es.cpp's runner, through the C++ or the Python executor; every
    input must be recorded in its wrapper (require_input_records: no warning, every check made)."""
    runner = es.cpp.AOTIRunner(path, require_input_records=True)
    if kind == "cpp":
        return runner.run_flat(list(inputs))
    nodes = es.loads(read_member(path, ".wrapper.json"), es.ExternKernelNodes)
    return runner.run_flat_with(es.ProxyExecutor(nodes).call_function, list(inputs))


@pytest.mark.parametrize("kind", ["python", "cpp"])
@pytest.mark.parametrize("writer", matrix.OLDER_RELEASES)
def test_packages_of_older_releases_run_here_through_both_executors(writer: str, kind: str) -> None:
    """Packages torch 2.11 and 2.12 compiled (tests/data/matrix/, matrix.KEPT), lite mode (the MLP
    at two batch sizes, topk/sort/gather/index_select) and default mode (a custom op whose kwarg-only
    defaults the node omits), equal to the eager outputs recorded beside them; their inputs are
    recorded by their `check_input_N` alone."""
    for name in matrix.KEPT:
        path = _older(writer, name)
        assert b'"input")' not in read_member(path, ".wrapper.cpp")  # no assert_size_stride record
        record = matrix.recorded(path)
        for inputs, want in zip(record["inputs"], record["outputs"], strict=True):
            got, want = _run(kind, path, inputs), pytree.tree_leaves(want)
            assert len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["python", "cpp"])
@pytest.mark.parametrize("writer", [*matrix.OLDER_RELEASES, RELEASE])
def test_a_failed_extern_call_is_raised_where_the_model_runs_on_after_it(writer: str, kind: str) -> None:
    """An out-of-range index fails the `index_select` extern call. torch 2.11's and 2.12's models
    ignore the executor's status and return as if they succeeded; the runner raises the call's
    error all the same, as it does for a model that stops there (the running torch's)."""
    path = _older(writer, "lite_index_sort") if writer in matrix.OLDER_RELEASES else zoo.lite_package("index_sort")
    source = read_member(path, ".wrapper.cpp").decode()
    checked = source.count("AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_proxy_executor_call_function(")
    assert (checked == 0) == IGNORES_EXECUTOR_STATUS[writer]
    assert "aoti_torch_proxy_executor_call_function(proxy_executor" in source
    x, _ = zoo.ZOO["index_sort"].inputs(0)
    with pytest.raises(IndexError, match="index out of range in self"):
        _run(kind, path, (x, torch.tensor([2, 0, 9])))


@pytest.mark.parametrize("writer", [*matrix.OLDER_RELEASES, RELEASE])
def test_the_first_failed_call_is_the_one_raised(writer: str) -> None:
    """A model that runs on after a failed call makes more calls, which fail too (their inputs
    were never written): the first failure is the one raised."""
    path = _older(writer, "lite_mlp") if writer in matrix.OLDER_RELEASES else zoo.lite_package("mlp")
    runner = es.cpp.AOTIRunner(path, require_input_records=True)

    def call_function(index: int, int_args: list[int], tensor_args: list[object]) -> None:
        raise es.CallError(f"refused call {index}")

    with pytest.raises(es.CallError, match=r"^refused call 0$"):
        runner.run_flat_with(call_function, list(zoo.ZOO["mlp"].inputs(0)))
