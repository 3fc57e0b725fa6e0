"""The fuzzers' kept reproducers (tests/fuzz/regressions*/) replayed through both executors, es.cpp's
included, without fuzzing: a reproducer loads, with a consistent plan for every node, or is refused
with an externspec error, as the harness requires (fuzz_executor_load.cpp). The timed fuzz runs
(test_fuzz.py) replay them in the fuzz harnesses; this replays them in the binding that ships, which
`make test-sanitize` runs under ASan and UBSan.

Replayed: every executor reproducer (an ExternKernelNodes document), and every decoder reproducer
whose type byte names ExternKernelNodes (the one type an executor loads). The Thrift decoder's are
Python's alone (fuzz_thrift.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import externspec as es
from tests.fuzz import run_fuzz
from tests.support.executors import Executor, slot_counts


def _reproducers() -> dict[str, bytes]:
    found = {}
    for path in sorted(run_fuzz.REGRESSIONS["executor"].glob("*")):
        if path.is_file() and path.suffix != ".md":
            found[f"executor/{path.name}"] = path.read_bytes()
    for path in sorted(run_fuzz.REGRESSIONS["decode"].glob("*")):
        data = path.read_bytes() if path.is_file() and path.suffix != ".md" else b""
        if data and run_fuzz.TYPES[(data[0] & 0x7F) % len(run_fuzz.TYPES)] == "ExternKernelNodes":
            found[f"decode/{path.name}"] = data[1:]
    return found


REPRODUCERS = _reproducers()


def test_there_are_reproducers_to_replay() -> None:
    assert REPRODUCERS, f"no reproducers under {Path(run_fuzz.__file__).parent}/regressions*/"


@pytest.mark.parametrize("name", sorted(REPRODUCERS))
def test_a_reproducer_loads_with_consistent_plans_or_is_refused(executor: Executor, name: str) -> None:
    try:
        loaded = executor(REPRODUCERS[name])
    except es.ExternSpecError:
        return
    for index in range(len(loaded)):
        inputs, tensors, input_ints, ints = slot_counts(loaded, index)
        assert inputs >= 0 and input_ints >= 0, (index, inputs, input_ints)
        assert tensors >= inputs and ints >= input_ints, (index, inputs, tensors, input_ints, ints)
