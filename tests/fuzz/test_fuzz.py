"""A short libFuzzer run of the C++ decoder per backend (ASan + UBSan), seeded from the
conformance corpus; `make fuzz FUZZ_SECONDS=...` runs the long version (tests/fuzz/run_fuzz.py).

The run must execute inputs (a fuzzer that runs nothing proves nothing) and find no crash: no
sanitizer report, no exception other than DecodeError/VersionError, no accepted document whose
encoding decodes differently.
"""

from __future__ import annotations

import os
import shutil

import pytest

from tests.fuzz import run_fuzz

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which(run_fuzz.COMPILER) is None,
                       reason="clang++ not installed (apt-get install clang libclang-rt-14-dev)"),
]

SECONDS = int(os.environ.get("FUZZ_TEST_SECONDS", "20"))


@pytest.mark.parametrize("backend", run_fuzz.BACKENDS)
def test_short_fuzz_run_finds_no_crash(backend: str, tmp_path) -> None:
    result = run_fuzz.run(backend, SECONDS, jobs_dir=tmp_path)
    assert not result.crashes, f"{backend}: crash inputs {result.crashes}\n{result.log[-4000:]}"
    assert result.executions > 1000, result.log[-2000:]


def test_seeds_cover_the_conformance_corpus(tmp_path) -> None:
    count = run_fuzz.write_seeds(tmp_path)
    assert count >= 2 * 40  # every corpus document, lenient and strict
    first = sorted(tmp_path.iterdir())[0].read_bytes()
    assert first[0] & 0x7F < len(run_fuzz.TYPES)
