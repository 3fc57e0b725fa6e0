"""The stored packages run on every x86-64 machine the tests run on (issue 54 item 2): each records
the baseline ISA (tests/support/matrix.py, BASELINE_CAPABILITY) in its metadata, and its model
library holds no AVX-512 instruction, read from the code itself (objdump): a machine without
AVX-512 (an AVX2-only AMD EPYC) would die with SIGILL on one, and the runner's check trusts the
metadata, which `-march=native` can contradict."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import externspec as es
from externspec import cpu_isa
from tests.support import matrix
from tests.support.paths import REPO

_INSTRUCTION = re.compile(r"^\s*[0-9a-f]+:\t([0-9a-f]{2}(?: [0-9a-f]{2})*)\s*\t(.*)$")
# What only AVX-512 has: 512-bit registers, opmask registers, vector registers 16-31.
_AVX512_OPERAND = re.compile(r"%zmm\d|%k[0-7]\b|%[xy]mm(?:1[6-9]|2\d|3[01])\b")
# Prefixes that may come before an EVEX prefix (address size, segment overrides).
_BEFORE_EVEX = {"67", "26", "2e", "36", "3e", "64", "65"}


def avx512_instructions(library: bytes, tmp: Path) -> list[str]:
    """The AVX-512 instructions of an x86-64 shared library: EVEX-encoded (first opcode byte 0x62,
    which is no instruction of 64-bit mode otherwise) or naming a register only AVX-512 has."""
    objdump = shutil.which("objdump")
    assert objdump, "objdump (binutils, which the C++ compiler needs) is not on PATH"
    path = tmp / "model.so"
    path.write_bytes(library)
    out = subprocess.run([objdump, "-d", "--insn-width=16", str(path)], capture_output=True, text=True,
                         check=True).stdout
    found = []
    for line in out.splitlines():
        m = _INSTRUCTION.match(line)
        if not m:
            continue
        code = [b for b in m[1].split()]
        first = next((b for b in code if b not in _BEFORE_EVEX), "")
        if first == "62" or _AVX512_OPERAND.search(m[2]):
            found.append(line.strip())
    return found


PACKAGES = [(r, n, p) for r, n, p in matrix.packages()]


@pytest.mark.parametrize(("release", "name", "package"), PACKAGES, ids=[f"{r}-{n}" for r, n, _ in PACKAGES])
def test_a_stored_package_needs_no_more_than_the_baseline(release: str, name: str, package: Path,
                                                          tmp_path: Path) -> None:
    with zipfile.ZipFile(package) as z:
        cpu = cpu_isa.package_cpu(z, str(package))
        (library,) = [z.read(member) for member, _, _ in cpu.models]
    assert [(machine, isa) for _, machine, isa in cpu.models] == [("x86_64", matrix.BASELINE_CAPABILITY.upper())]
    found = avx512_instructions(library, tmp_path)
    assert not found, f"{package}: {len(found)} AVX-512 instructions, the first {found[:3]}"


def test_the_reader_finds_avx512_where_it_is(tmp_path: Path) -> None:
    """The check itself: a library compiled here with -mavx512f from a loop the compiler vectorizes."""
    source = tmp_path / "k.c"
    source.write_text("void k(float* a, const float* b, int n) { for (int i = 0; i < n; ++i) a[i] += b[i] * 3; }\n")
    found = []
    for flags in (["-mavx2", "-mfma"], ["-mavx512f", "-mprefer-vector-width=512"]):
        library = tmp_path / "k.so"
        subprocess.run(["gcc", "-O3", "-shared", "-fPIC", *flags, str(source), "-o", str(library)], check=True)
        found.append(avx512_instructions(library.read_bytes(), tmp_path))
    assert found[0] == [] and found[1], found


@pytest.mark.slow
def test_the_matrix_runs_on_a_cpu_without_avx512() -> None:
    """The documented `python -m tests.support.matrix run` on a CPU without AVX-512: QEMU's user-mode
    emulation of a Haswell (AVX2 and FMA; `make setup` installs Debian's qemu-user). With the packages
    compiled on an AVX-512 machine it died with SIGILL (exit 132) at its first package; now every
    package runs through es.cpp, the Python executor and torch's runner, each as the matrix says.
    qemu-user shows the host's /proc/cpuinfo, so the runner's check is told the emulated CPU's level
    (ATEN_CPU_CAPABILITY=avx2, which torch's own kernels also pick under this emulation)."""
    qemu = shutil.which("qemu-x86_64")
    assert qemu, "qemu-x86_64 (Debian's qemu-user, which `make setup` installs) is not on PATH"
    es.cpp.extension()  # built here, not under emulation
    env = {**os.environ, "ATEN_CPU_CAPABILITY": matrix.BASELINE_CAPABILITY}
    out = subprocess.run([qemu, "-cpu", "Haswell", sys.executable, "-m", "tests.support.matrix", "run"], cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, f"exit {out.returncode}: {out.stderr[-3000:]}"
    rows = {line.split(":")[0]: line for line in out.stdout.splitlines() if line.startswith("compiled by ")}
    assert len(rows) == len(matrix.packages()), out.stdout
    for release, name, _ in matrix.packages():
        row = rows[f"compiled by {release}, {name}"]
        if (release, name) in matrix.KNOWN_FAILING:
            assert "es.cpp: ModelError" in row, row
        else:
            assert "es.cpp: equal; python: equal; torch: " in row, row
