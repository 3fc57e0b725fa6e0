"""A short libFuzzer run of the C++ decoder per backend, of the C++ executor's load path (linked
against libtorch), of a model library's ELF tables as the runner reads them and of the Triton
backend's config.pbtxt scan, all under ASan + UBSan, seeded from the conformance corpus (and, for
the executor, specs the exporter writes; small libraries the C compiler writes; config texts), and of
the Python Thrift decoder under atheris;
`make fuzz FUZZ_SECONDS=...` runs the long version (tests/fuzz/run_fuzz.py).

The run must execute inputs (a fuzzer that runs nothing proves nothing) and find no crash: no
sanitizer report; for the decoder no exception other than DecodeError/VersionError and no accepted
document whose encoding decodes differently; for the executor no exception that is not an
externspec error; for the Thrift decoder no exception other than DecodeError/VersionError, no
accepted document that does not round-trip, no input over libFuzzer's time or RSS limit.
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
# The executor target links libtorch (its build is cached like the others) and the Thrift target runs
# under atheris; the ELF reader and the pbtxt scan are small and fast (hundreds of thousands of
# executions a second): a few seconds each in the suite.
EXECUTOR_SECONDS = int(os.environ.get("FUZZ_TEST_EXECUTOR_SECONDS", "5"))


@pytest.mark.parametrize("target", run_fuzz.TARGETS)
def test_short_fuzz_run_finds_no_crash(target: str, tmp_path) -> None:
    seconds = EXECUTOR_SECONDS if target in ("executor", "thrift", "elf", "pbtxt") else SECONDS
    result = run_fuzz.run(target, seconds, jobs_dir=tmp_path)
    assert not result.crashes, f"{target}: crash inputs {result.crashes}\n{result.log[-4000:]}"
    assert result.executions > 1000, result.log[-2000:]


def test_seeds_cover_the_conformance_corpus(tmp_path) -> None:
    count = run_fuzz.write_seeds(tmp_path)
    assert count >= 2 * 40  # every corpus document, lenient and strict
    first = sorted(tmp_path.iterdir())[0].read_bytes()
    assert first[0] & 0x7F < len(run_fuzz.TYPES)


def test_executor_seeds_are_specs_the_executor_loads(tmp_path) -> None:
    import externspec as es

    count = run_fuzz.write_seeds(tmp_path, "executor")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert count == len(names) and any(n.startswith("payload-") for n in names)
    exporter = [n for n in names if n.startswith("exporter-")]
    assert len(exporter) == 8
    for name in exporter:  # the exporter's specs plan in full: the fuzzer starts from loads that succeed
        spec = es.load(tmp_path / name, es.ExternKernelNodes)
        assert len(es.ProxyExecutor(spec)) == len(spec.nodes) >= 3, name


def test_thrift_seeds_cover_both_protocols(tmp_path) -> None:
    import externspec as es
    from externspec import thrift

    count = run_fuzz.write_seeds(tmp_path, "thrift")
    seeds = sorted(tmp_path.iterdir())
    assert count == len(seeds) >= 4 * 10
    for path in seeds:  # every seed decodes under the type and protocol its first byte names
        data = path.read_bytes()
        model = getattr(es, run_fuzz.TYPES[data[0] & 0x0F])
        thrift.loads(data[1:], model, thrift.PROTOCOLS[(data[0] >> 4) & 1], strict=bool(data[0] & 0x80))
