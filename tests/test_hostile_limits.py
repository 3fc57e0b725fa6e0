"""Hostile inputs that once exhausted memory or time, each run in a child under an address-space
limit so that a regression fails instead of taking the machine (issue: version numbers sized a list)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

LIMIT = 1 << 30

_CHILD = textwrap.dedent("""
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    import externspec as es
    from externspec import thrift_codec
    doc = es.ExternKernelNodes(nodes=[], schema_version=es.SchemaVersion(major={major}, minor=0))
    try:
        {call}
    except es.VersionError as e:
        print(e)
""")


@pytest.mark.parametrize("major", [-10**15, 0])
@pytest.mark.parametrize("call", ["es.loads(es.dumps(doc), es.ExternKernelNodes)",
                                  "thrift_codec.loads(thrift_codec.dumps(doc), es.ExternKernelNodes)",
                                  "thrift_codec.loads(thrift_codec.dumps(doc, 'compact'), es.ExternKernelNodes,"
                                  " 'compact')"])
def test_a_major_below_one_is_a_version_error_at_once(major: int, call: str) -> None:
    proc = subprocess.run([sys.executable, "-c", _CHILD.format(limit=LIMIT, major=major, call=call)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == (f"$.schema_version: document schema {major}.0 is not a schema version "
                                   "(majors start at 1, minors at 0)")
