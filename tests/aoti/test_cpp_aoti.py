"""es.cpp.AOTIRunner: real AOTInductor packages run with externspec's C++ executor as the proxy
executor give eager's outputs and torch's own runner's; bad packages and bad inputs are clean
errors, and an executor error crosses the compiled model's C boundary with its message.

Slow: compiles two AOTInductor models once (cached under .cache/aoti) and the C++ extension."""

from __future__ import annotations

import inspect
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest
import torch

import externspec as es
from tests.support import cpp_models as cm

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def abi_package() -> Path:
    return cm.package("abi")


@pytest.fixture(scope="session")
def defects_package() -> Path:
    return cm.package("torch_defects")


@pytest.fixture(scope="session")
def abi_runner(abi_package: Path) -> es.cpp.AOTIRunner:
    return es.cpp.AOTIRunner(abi_package)


def flat(out: Any) -> list[torch.Tensor]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def assert_all_equal(got: list[torch.Tensor], want: list[torch.Tensor]) -> None:
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert (g.dtype, g.shape) == (w.dtype, w.shape), f"output {i}"
        assert torch.equal(g, w), f"output {i}"


def _spec(package: Path) -> dict[str, Any]:
    with zipfile.ZipFile(package) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".wrapper.json")]
        return json.loads(z.read(name))


def test_abi_package_calls_every_custom_op_and_an_aten_fallback(abi_package: Path) -> None:
    spec = _spec(abi_package)
    assert "schema_version" not in spec  # torch-written: read under the 1.0 baseline
    targets = {n["node"]["target"] for n in spec["nodes"]}
    assert {"aten::median.dim", "aten::nanmedian.dim"} <= targets
    ours = {t.split("::")[1] for t in targets if t.startswith("externspec_test::")}
    assert ours == {"all_inputs", "scalars", "kwonly", "enum_defaults", "tuple_out", "list_out", "optional_out",
                    "int_out", "mixed_out", "add_into"}
    members = {next(iter(i["arg"])) for n in spec["nodes"] for i in n["node"]["inputs"]}
    assert {"as_tensor", "as_tensors", "as_optional_tensors", "as_int", "as_ints", "as_sym_int", "as_sym_ints",
            "as_float", "as_floats", "as_bool", "as_bools", "as_string", "as_strings", "as_scalar_type",
            "as_layout", "as_memory_format", "as_device", "as_none"} <= members


@pytest.mark.parametrize("n", [4, 2, 9], ids=lambda n: f"n={n}")
def test_abi_package_matches_eager_and_torchs_runner(abi_package: Path, abi_runner: es.cpp.AOTIRunner,
                                                     n: int) -> None:
    model = cm.MODELS["abi"]
    inputs = model.inputs(n)
    want = flat(model.module(*inputs))
    got = flat(abi_runner(*inputs))
    assert_all_equal(got, want)
    torch_runner = torch._inductor.aoti_load_package(str(abi_package))
    assert_all_equal(got, flat(torch_runner(*inputs)))


def test_package_torch_cannot_load_runs_through_externspec(defects_package: Path) -> None:
    model = cm.MODELS["torch_defects"]
    runner = es.cpp.AOTIRunner(defects_package)
    for n in (3, 6):
        inputs = model.inputs(n)
        assert_all_equal(flat(runner(*inputs)), flat(model.module(*inputs)))
    with pytest.raises(RuntimeError):
        torch._inductor.aoti_load_package(str(defects_package))(*model.inputs(3))


def test_inputs_are_checked_before_the_model_runs(abi_runner: es.cpp.AOTIRunner) -> None:
    x, y, z = cm.MODELS["abi"].inputs(4)
    assert abi_runner.num_inputs == 3
    with pytest.raises(es.CallError, match="the model takes 3 inputs, got 2"):
        abi_runner.run_flat([x, y])
    with pytest.raises(es.CallError, match=r"input 2 has shape \[6, 4\], the model was compiled for \[5, 4\]"):
        abi_runner(x, y, torch.randn(6, 4))
    with pytest.raises(es.CallError, match=r"input 0 has shape \[4\], the model was compiled for \[\*, 4\]"):
        abi_runner(x[:, 0], y, z)
    # x and y share their dynamic size: a y of another length would be read past its end.
    with pytest.raises(es.CallError, match=r"input 1 has shape \[5, 4\], size 0 is s\d+ = 4 \(s\d+ is size 0 of "
                                           r"input 0\)"):
        abi_runner(x, torch.randn(5, 4), z)


def test_run_flat_is_the_bindings_own_call_and_checks_its_stream(abi_runner: es.cpp.AOTIRunner) -> None:
    """`run_flat` has no Python frame on the hot path (the binding's method, set per instance); the
    stream checks moved into the binding with it, and the flat call still equals the pytree call."""
    inputs = list(cm.MODELS["abi"].inputs(4))
    assert not inspect.isfunction(abi_runner.run_flat.__func__)  # a builtin of the binding, not Python's
    assert_all_equal(abi_runner.run_flat(inputs), flat(abi_runner(*inputs)))
    assert_all_equal(abi_runner.run_flat(inputs, stream=None), flat(abi_runner(*inputs)))
    with pytest.raises(TypeError, match=r"stream must be a torch\.cuda\.Stream, got int"):
        abi_runner.run_flat(inputs, stream=7)
    with pytest.raises(TypeError, match=r"stream must be a torch\.cuda\.Stream, got str"):
        abi_runner.run(*inputs, stream="cuda:0")


def test_a_subclass_that_overrides_run_flat_keeps_its_own(abi_package: Path) -> None:
    class Counting(es.cpp.AOTIRunner):
        calls = 0

        def run_flat(self, inputs: Any, *, stream: Any = None) -> list[torch.Tensor]:
            Counting.calls += 1
            return super().run_flat(inputs, stream=stream)

    runner = Counting(abi_package)
    runner(*cm.MODELS["abi"].inputs(4))
    assert Counting.calls == 1


def _repack(package: Path, tmp_path: Path, edit: Any, *, without_source: bool = False) -> Path:
    """A copy of `package` whose extern-kernel file is replaced by `edit(text)` (`without_source`: and
    whose `*.wrapper.cpp` is left out)."""
    out = tmp_path / "edited.pt2"
    with zipfile.ZipFile(package) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            if without_source and item.filename.endswith(".wrapper.cpp"):
                continue
            data = src.read(item.filename)
            if item.filename.endswith(".wrapper.json"):
                data = edit(data.decode()).encode()
            dst.writestr(item, data)
    return out


def test_executor_errors_cross_the_compiled_models_boundary(abi_package: Path, tmp_path: Path) -> None:
    def drop_a_list_output(text: str) -> str:
        doc = json.loads(text)
        for node in doc["nodes"]:
            if node["node"]["target"] == "externspec_test::list_out":
                node["node"]["outputs"][0]["as_tensors"].pop()
        return json.dumps(doc)

    # With its wrapper source, the runner checks each call's lengths against the plans at load.
    with pytest.raises(es.SpecMismatchError, match=r"\(externspec_test::list_out\): its call in the package's "
                                                   r"wrapper passes 4 tensors and 1 ints, but its plan takes 3"):
        es.cpp.AOTIRunner(_repack(abi_package, tmp_path, drop_a_list_output))
    # Without it, the executor's error at the call crosses the compiled model back to the caller.
    with pytest.warns(UserWarning, match="the package records no dtype or shape"):
        runner = es.cpp.AOTIRunner(_repack(abi_package, tmp_path, drop_a_list_output, without_source=True))
    with pytest.raises(es.CallError, match=r"\(externspec_test::list_out\): expected 1 input \+ 2 output tensor "
                                           r"slots and 1 input \+ 0 int-return slots, got 4 tensors and 1 ints"):
        runner(*cm.MODELS["abi"].inputs(4))


def test_the_runners_device_replaces_the_serialized_one(abi_package: Path, tmp_path: Path) -> None:
    """A package whose extern calls were serialized on cuda:1 runs on the CPU runner equal to eager:
    the custom op `all_inputs` receives the runner's device (cpu), as in torch 2.14's runner (torch
    2.13's passes the serialized device: its result differs from eager; docs/torch-compat.md)."""
    def on_cuda_1(text: str) -> str:
        doc = json.loads(text)
        devices = [i["arg"] for n in doc["nodes"] for i in n["node"]["inputs"] if "as_device" in i["arg"]]
        assert devices
        for arg in devices:
            arg["as_device"] = {"type": "cuda", "index": 1}
        return json.dumps(doc)

    model = cm.MODELS["abi"]
    inputs = model.inputs(4)
    assert_all_equal(flat(es.cpp.AOTIRunner(_repack(abi_package, tmp_path, on_cuda_1))(*inputs)),
                     flat(model.module(*inputs)))


@pytest.mark.parametrize(("edit", "kind", "match"), [
    (lambda t: t[: len(t) // 2], es.DecodeError, r"edited\.pt2!.*\.wrapper\.json: \$: Invalid JSON"),
    (lambda t: t.replace("externspec_test::tuple_out", "externspec_test::gone"), es.SpecMismatchError,
     r"no op `externspec_test::gone` is registered"),
    (lambda t: t.replace('"name": "n"', '"name": "count"'), es.SpecMismatchError,
     r"argument `count` \(as_int\) is not in the runtime op schema"),
    (lambda t: json.dumps({**json.loads(t), "schema_version": {"major": 9, "minor": 0}}), es.VersionError,
     r"document schema 9\.0 has major version 9"),
], ids=["truncated", "unknown-op", "renamed-argument", "other-major"])
def test_bad_spec_in_a_package_is_a_load_error(abi_package: Path, tmp_path: Path, edit: Any, kind: type,
                                               match: str) -> None:
    with pytest.raises(kind, match=match):
        es.cpp.AOTIRunner(_repack(abi_package, tmp_path, edit))


def test_not_a_package(tmp_path: Path) -> None:
    path = tmp_path / "empty.pt2"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("empty/archive_format", "pt2")
        z.writestr("empty/.data/version", "1")
    with pytest.raises(es.PackageError, match=r"empty\.pt2: a zip archive that is not an AOTInductor package") as info:
        es.cpp.AOTIRunner(path)
    assert info.value.kind == "other_zip"
    path.write_bytes(b"not a zip")
    with pytest.raises(es.PackageError, match=r"empty\.pt2: not a zip archive \(a \.pt2 file is one\)") as info:
        es.cpp.AOTIRunner(path)
    assert info.value.kind == "not_zip"


def test_two_models_loaded_side_by_side_run_their_own_code(abi_runner: es.cpp.AOTIRunner,
                                                           defects_package: Path, tmp_path: Path) -> None:
    # RTLD_LOCAL: with RTLD_GLOBAL a second model silently ran the first one's code.
    copy = tmp_path / "copy.pt2"
    shutil.copy(defects_package, copy)
    other = es.cpp.AOTIRunner(copy)
    x = cm.MODELS["torch_defects"].inputs(3)
    assert_all_equal(flat(other(*x)), flat(cm.MODELS["torch_defects"].module(*x)))
    abi_inputs = cm.MODELS["abi"].inputs(3)
    assert_all_equal(flat(abi_runner(*abi_inputs)), flat(cm.MODELS["abi"].module(*abi_inputs)))
