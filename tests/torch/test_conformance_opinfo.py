"""Conformance on a corpus nobody here wrote: torch's OpInfo database.

Every OpInfo of `op_db` (sorted by name and variant, so the run is deterministic) runs its first
sample input (float32, else int64 or bool) under a TorchDispatchMode that captures up to 8 ATen
calls per sample; each call is exported, its spec round-tripped through JSON, replayed through a
fresh ProxyExecutor from the flat arrays, and compared with eager, bitwise (see
support/opinfo_replay.py). Set EXTERNSPEC_OPINFO_SAMPLES=2 for the first two samples of each op
(about twice the time).

The test fails on any silent mismatch or replay error and keeps a floor on the pass rate; the
report (pass rate, unsupported by reason) is printed with `pytest -s`.
"""

from __future__ import annotations

import os

import pytest

import externspec as es
from externspec.abi import op_policy
from tests.support import opinfo_replay

PASS_RATE_FLOOR = 0.97


@pytest.fixture(scope="module")
def report() -> opinfo_replay.Report:
    common = pytest.importorskip("torch.testing._internal.common_methods_invocations")
    infos = sorted(common.op_db, key=lambda o: (o.name, o.variant_test_name))
    samples = int(os.environ.get("EXTERNSPEC_OPINFO_SAMPLES", "1"))
    with _quiet():
        result = opinfo_replay.run(infos, _trusting_executor, samples_per_op=samples, calls_per_sample=8)
    print("\n" + "\n".join(result.lines()))
    return result


def _trusting_executor(spec: es.ExternKernelNodes) -> es.ProxyExecutor:
    """The replayed specs are eager calls' own, not hostile ones: the op policy's deny list is
    lifted (`allow_ops`), so ops denied for what a hostile spec could do with them (`max_pool1d`)
    keep their conformance check."""
    return es.ProxyExecutor(spec, allow_ops=list(op_policy.policy().denied))


class _quiet:
    """OpInfo samples trigger torch's own deprecation warnings; they are not ours to act on."""

    def __enter__(self) -> None:
        import warnings

        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc: object) -> None:
        self._cm.__exit__(*exc)


def test_no_silent_mismatch(report: opinfo_replay.Report) -> None:
    assert report.mismatches == []


def test_no_replay_errors(report: opinfo_replay.Report) -> None:
    assert report.errors == []


def test_pass_rate_floor(report: opinfo_replay.Report) -> None:
    assert report.ops > 600 and report.calls > 1000
    assert report.pass_rate >= PASS_RATE_FLOOR, "\n".join(report.lines())


def test_unsupported_only_for_types_the_abi_cannot_carry(report: opinfo_replay.Report) -> None:
    # Everything refused is refused for a documented ABI limit (Scalar/bool returns today).
    assert all("the ABI cannot carry it" in reason for reason in report.unsupported), report.unsupported
