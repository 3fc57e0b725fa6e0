"""A package's CPU instructions are checked before any of its code runs (issue 54 item 2): torch
records the vector ISA it compiled a model library for (`AOTI_CPU_ISA`), and a library run on a CPU
without those instructions dies with SIGILL at its first run. The runner refuses such a package
(PackageError, kind "cpu_isa") before the library is opened, whichever caller loads it; the rule is
one table (include/externspec/torch/cpu_isa.def) and one test body over both languages here."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import externspec as es
from externspec import cpu_isa
from externspec.messages import MESSAGES
from tests.support import matrix
from tests.support.cli import externspec
from tests.support.package_edits import rewrite, with_cpu_isa

AVX2_HOST = ("x86_64", ["avx", "avx2", "fma", "f16c", "sse4_2"])
AVX512_FEATURES = [*AVX2_HOST[1], "avx512f", "avx512dq", "avx512vl", "avx512bw", "avx512_vnni"]

# (package machine, AOTI_CPU_ISA, host machine, host features (None: unread), ATEN_CPU_CAPABILITY)
# -> the message the refusal is (None: runs).
CASES: dict[str, tuple[tuple[str, str, str, list[str] | None, str], str | None]] = {
    "avx2 on avx2": (("x86_64", "AVX2", *AVX2_HOST, ""), None),
    "no vector isa anywhere": (("x86_64", "INVALID_VEC_ISA", "x86_64", None, ""), None),
    "nothing recorded": (("", "", *AVX2_HOST, ""), None),
    "avx512 on avx2": (("x86_64", "AVX512 AVX512_VNNI", *AVX2_HOST, ""), "CPU_ISA_LACKING"),
    "avx512 on avx512": (("x86_64", "AVX512 AVX512_VNNI", "x86_64", AVX512_FEATURES, ""), None),
    "avx512 capped at avx2": (("x86_64", "AVX512 AVX512_VNNI", "x86_64", AVX512_FEATURES, "avx2"), "CPU_ISA_CAPPED"),
    "avx2 capped at default": (("x86_64", "AVX2", "x86_64", AVX512_FEATURES, "default"), "CPU_ISA_CAPPED"),
    "a capability torch ignores": (("x86_64", "AVX2", *AVX2_HOST, "zvector"), None),
    "amx without amx": (("x86_64", "AVX512 AVX512_VNNI AMX_TILE", "x86_64", AVX512_FEATURES, ""), "CPU_ISA_LACKING"),
    "an unknown token": (("x86_64", "AVX10_2", *AVX2_HOST, ""), "CPU_ISA_UNKNOWN"),
    "features unread": (("x86_64", "AVX2", "x86_64", None, ""), "CPU_ISA_UNREAD"),
    "another machine": (("aarch64", "NEON", *AVX2_HOST, ""), "CPU_ISA_OTHER_MACHINE"),
    "neon on aarch64": (("aarch64", "NEON", "aarch64", ["fp", "asimd"], ""), None),
    "a machine the table does not list": (("riscv64", "RVV", "riscv64", [], ""), None),
}


Verdict = tuple[str | None, str]  # (the refusal, None: runs; the host's ISA)


def python_rule(machine: str, isa: str, host_machine: str, features: list[str] | None, capability: str) -> Verdict:
    host = cpu_isa.HostCpu(host_machine, None if features is None else frozenset(features), "unreadable", capability)
    return cpu_isa.refusal(machine, isa, host), cpu_isa.host_isa(host)


def cpp_rule(machine: str, isa: str, host_machine: str, features: list[str] | None, capability: str) -> Verdict:
    refusal, host_isa = es.cpp.extension().cpu_isa_refusal(machine, isa, host_machine, features, "unreadable",
                                                           capability)
    return refusal, host_isa


RULES: dict[str, Callable[..., Verdict]] = {"python": python_rule, "c++": cpp_rule}


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("case", CASES)
def test_the_rule(rule: str, case: str) -> None:
    args, want = CASES[case]
    refusal, host_isa = RULES[rule](*args)
    if want is None:
        assert refusal is None
    else:
        assert refusal is not None
        first_words = MESSAGES[want].split("{")[0]
        assert refusal.startswith(first_words), refusal
        assert args[1].split()[0] in refusal or want == "CPU_ISA_OTHER_MACHINE"
    # the other language says the same, word for word
    other = RULES["c++" if rule == "python" else "python"](*args)
    assert (refusal, host_isa) == other


def test_the_lacking_features_and_this_cpu_are_named() -> None:
    refusal, host_isa = python_rule("x86_64", "AVX512 AVX512_VNNI", *AVX2_HOST, "")
    assert host_isa == "INVALID_VEC_ISA AVX2"
    assert refusal is not None
    assert "this CPU (INVALID_VEC_ISA AVX2) lacks avx512f, avx512dq, avx512vl, avx512bw, avx512_vnni" in refusal
    assert "SIGILL" in refusal and "TORCHINDUCTOR_CPP_MARCH" in refusal


def test_both_languages_see_this_machine_alike() -> None:
    cpp = es.cpp.extension().host_cpu()
    py = cpu_isa.host_cpu()
    assert cpp["machine"] == py.machine
    assert (None if cpp["features"] is None else frozenset(cpp["features"])) == py.features
    assert cpp["capability"] == py.capability
    if py.machine == "x86_64":
        assert py.features is not None and "sse2" in py.features  # every x86-64 CPU has it


def test_every_token_of_the_table_is_one_torch_records() -> None:
    """The x86 tokens are torch's VecISA names upper-cased (AOTI_CPU_ISA), each with features."""
    from torch._inductor import cpu_vec_isa

    recorded = {t for isa in cpu_vec_isa.supported_vec_isa_list for t in str(isa).upper().split()}
    recorded.add(str(cpu_vec_isa.invalid_vec_isa).upper())
    table = {e.token for e in cpu_isa.ISAS}
    assert recorded <= table, recorded - table
    assert {e.capability for e in cpu_isa.ISAS} <= set(cpu_isa.CAPABILITIES)


PACKAGE = matrix.package("2.15", "lite")  # no C-shim function newer than any supported torch's


def _recorded_run(runner: Any) -> None:
    record = matrix.recorded(PACKAGE)
    got = runner(*record["inputs"][0])
    for g, w in zip(got, record["outputs"][0], strict=True):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)


def test_a_package_above_this_process_is_refused_before_its_library_opens(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """ATEN_CPU_CAPABILITY=avx2 makes this machine an AVX2 one for the runner, as it does for ATen and
    Inductor: an AVX-512 package is refused, and its library (here not even an ELF file) never opened."""
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx2")
    package = with_cpu_isa(PACKAGE, tmp_path / "avx512.pt2", "AVX512 AVX512_VNNI", library=b"not a shared object")
    with pytest.raises(es.PackageError, match=r"ATEN_CPU_CAPABILITY=avx2, below AVX512 AVX512_VNNI") as info:
        es.cpp.AOTIRunner(package)
    assert info.value.kind == "cpu_isa"
    assert "avx512.pt2!data/aotinductor/model/" in str(info.value)
    with pytest.raises(es.PackageError, match=r"AVX512 AVX512_VNNI") as from_bytes:
        es.cpp.AOTIRunner(package.read_bytes())
    assert from_bytes.value.kind == "cpu_isa"


def test_a_package_this_cpu_lacks_is_refused(tmp_path: Path) -> None:
    missing = [e.token for e in cpu_isa.ISAS if e.machine == cpu_isa.host_cpu().machine
               and cpu_isa.refusal("", e.token, cpu_isa.host_cpu()) is not None]
    if not missing:
        pytest.skip("this CPU has every ISA of the table")
    package = with_cpu_isa(PACKAGE, tmp_path / "wide.pt2", missing[-1], library=b"not a shared object")
    with pytest.raises(es.PackageError, match="lacks") as info:
        es.cpp.AOTIRunner(package)
    assert info.value.kind == "cpu_isa"


def test_the_stored_packages_run_with_the_capability_forced_down(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test data is compiled for AVX2 (tests/support/matrix.py): under ATEN_CPU_CAPABILITY=avx2 it
    loads and runs equal to eager, as on a machine without AVX-512."""
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx2")
    _recorded_run(es.cpp.AOTIRunner(PACKAGE))


def test_inspect_and_check_spec_show_the_isa(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx2")
    package = with_cpu_isa(PACKAGE, tmp_path / "avx512.pt2", "AVX512 AVX512_VNNI")
    out = externspec("inspect", "--format", "json", str(package))
    assert out.returncode == 0, out.stderr
    cpu = json.loads(out.stdout)[0]["cpu"]
    assert cpu["models"][0]["isa"] == "AVX512 AVX512_VNNI"
    assert "ATEN_CPU_CAPABILITY=avx2" in cpu["refusal"]
    text = externspec("inspect", str(package)).stdout
    assert "compiled for CPU ISA AVX512 AVX512_VNNI (x86_64)" in text
    assert "this machine refuses it" in text
    stored = externspec("check-spec", "--load", "tests.support.matrix_ops", "--runtimes", str(PACKAGE)).stdout
    assert "compiled for CPU ISA AVX2 (x86_64): this machine runs it" in stored


def test_a_metadata_that_is_not_strings_is_a_package_error(tmp_path: Path) -> None:
    def edit(name: str, data: bytes) -> tuple[str, bytes]:
        return name, b'{"AOTI_CPU_ISA": 3}' if name.endswith(".wrapper_metadata.json") else data
    package = rewrite(PACKAGE, tmp_path / "bad.pt2", edit)
    with zipfile.ZipFile(package) as z, pytest.raises(es.PackageError, match=r"bad\.pt2!.*wrapper_metadata\.json"):
        cpu_isa.package_cpu(z, str(package))
    with pytest.raises(es.PackageError, match=r"wrapper_metadata\.json"):
        es.cpp.AOTIRunner(package)
