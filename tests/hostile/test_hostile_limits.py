"""Hostile inputs that once exhausted memory or time, each run in a child under an address-space
limit so that a regression fails instead of taking the machine (issue: version numbers sized a list)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import externspec as es
from externspec.wire import MAX_JSON_DEPTH
from tests.support.executors import Executor
from tests.support.hostile_inputs import nesting_cases

LIMIT = 1 << 30

_CHILD = textwrap.dedent("""
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    import externspec as es
    from externspec import thrift
    doc = es.ExternKernelNodes(nodes=[], schema_version=es.SchemaVersion(major={major}, minor=0))
    try:
        {call}
    except es.VersionError as e:
        print(e)
""")


@pytest.mark.parametrize("major", [-10**15, 0])
@pytest.mark.parametrize("call", ["es.loads(es.dumps(doc), es.ExternKernelNodes)",
                                  "thrift.loads(thrift.dumps(doc), es.ExternKernelNodes)",
                                  "thrift.loads(thrift.dumps(doc, 'compact'), es.ExternKernelNodes,"
                                  " 'compact')"])
def test_a_major_below_one_is_a_version_error_at_once(major: int, call: str) -> None:
    proc = subprocess.run([sys.executable, "-c", _CHILD.format(limit=LIMIT, major=major, call=call)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == (f"$.schema_version: document schema {major}.0 is not a schema version "
                                   "(majors start at 1, minors at 0)")


def test_wrapper_calls_are_read_in_linear_time() -> None:
    """Unterminated call prefixes (7 MB) around one real call: a search over the whole text once
    rescanned to the end from every prefix (0.68 MB took 53 s); now each character is read once.
    The child's timeout is a hang guard, two orders of magnitude above the expected time."""
    call = ("aoti_torch_proxy_executor_call_function(proxy_executor, 3, 2, std::array<int64_t, 2>{1, -4L}.data(), "
            "2, std::array<AtenTensorHandle, 2>{buf0, buf1}.data());")
    junk = "aoti_torch_proxy_executor_call_function(proxy_executor, 1, 1, std::array<int64_t, 1>{" * 80_000
    child = textwrap.dedent("""
        import sys
        from externspec.aoti import parse_wrapper_calls
        calls = parse_wrapper_calls(sys.stdin.read())
        print([(c.index, c.int_args, c.tensor_names) for c in calls])
    """)
    proc = subprocess.run([sys.executable, "-c", child], input=call + junk + ";" + call + junk,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == str([(3, (1, -4), ("buf0", "buf1"))] * 2)


@pytest.mark.parametrize("name", [name for name, _, _ in nesting_cases(MAX_JSON_DEPTH)])
def test_both_executors_apply_one_nesting_rule(executor: Executor, name: str) -> None:
    """A spec with an ignored member nested to the limit: both executors accept or refuse it alike
    (200 nested objects: es.ProxyExecutor refused the spec, es.cpp.ProxyExecutor accepted it)."""
    _, value, accepted = {case[0]: case for case in nesting_cases(MAX_JSON_DEPTH)}[name]
    text = '{"nodes": [], "x": ' + value + "}"
    if accepted:
        assert len(executor(text)) == 0
    else:
        with pytest.raises(es.DecodeError, match=f"^\\$: nesting deeper than {MAX_JSON_DEPTH} levels"):
            executor(text)
