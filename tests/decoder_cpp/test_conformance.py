"""One corpus, two decoders: tests/conformance is read by Python and by the C++ header (every build
of tests/decoder_cpp/harness.py: both backends, and the default one with its codec compiled separately).

Valid documents decode in C++ and re-encode to the exact bytes of Python's `es.dumps`; invalid ones
are rejected by both with the same error, kind of problem and JSON path (manifest.json records the
expectation), each read from the error's records, never from its message.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import externspec as es
from tests.support.paths import CONFORMANCE

MANIFEST = json.loads((CONFORMANCE / "manifest.json").read_text(encoding="utf-8"))
VALID = sorted(MANIFEST["valid"].items())
INVALID = sorted(MANIFEST["invalid"].items())

pytestmark = pytest.mark.slow  # builds the harness (cached in .cache/cpp)


def python_outcome(type_name: str, path: Path) -> dict[str, str]:
    """Python's verdict on an invalid document: error, JSON path, and the first problem's kind (a
    DecodeError) or the key that decided it (a VersionError about a newer minor's key)."""
    try:
        es.load(path, getattr(es, type_name))
    except es.DecodeError as e:
        return {"error": "DecodeError", "path": e.path, "kind": e.errors()[0]["kind"]}
    except es.VersionError as e:
        return {"error": "VersionError", "path": e.path, **({"key": e.key} if e.key else {})}
    return {"error": "OK"}


def recorded(expect: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in expect.items() if k != "type"}


def test_corpus_is_complete() -> None:
    on_disk = {p.name for kind in ("valid", "invalid") for p in (CONFORMANCE / kind).glob("*.json")}
    listed = set(MANIFEST["valid"]) | set(MANIFEST["invalid"])
    assert on_disk == listed
    assert len(VALID) >= 10 and len(INVALID) >= 30


@pytest.mark.parametrize(("name", "expect"), INVALID, ids=[n for n, _ in INVALID])
def test_python_rejects_invalid_as_recorded(name: str, expect: dict[str, str]) -> None:
    assert python_outcome(expect["type"], CONFORMANCE / "invalid" / name) == recorded(expect)


def test_cpp_round_trips_valid_documents_to_python_bytes(harness) -> None:
    outcomes = harness.run([(t, CONFORMANCE / "valid" / name) for name, t in VALID])
    for (name, t), got in zip(VALID, outcomes, strict=True):
        model = es.load(CONFORMANCE / "valid" / name, getattr(es, t))
        assert got.kind == "OK", f"{harness.build} rejected valid/{name}: {got.message}"
        assert got.encoded == es.dumps(model), f"{harness.build}: valid/{name} re-encoded differently"


def test_cpp_rejects_invalid_documents_like_python(harness) -> None:
    outcomes = harness.run([(e["type"], CONFORMANCE / "invalid" / name) for name, e in INVALID])
    for (name, expect), got in zip(INVALID, outcomes, strict=True):
        outcome = {"error": got.kind, "path": got.path, **({"kind": got.error_kind} if got.error_kind else {}),
                   **({"key": got.key} if got.key else {})}
        assert outcome == recorded(expect), f"{harness.build}: invalid/{name}: {got}"


def test_cpp_messages_match_python_for_schema_errors(harness) -> None:
    """Beyond kind and path, the C++ messages use Python's wording. Excepted: syntax errors (each parser
    words its own), and an older major, which Python hands to its upgraders while C++ names the
    `externspec upgrade` command."""
    schema_errors = [(n, e) for n, e in INVALID if not n.startswith(("syntax", "invalid_utf8", "lone", "empty",
                                                                     "nesting", "bigint",
                                                                     "versioned_major_mismatch_with_unknown"))]
    outcomes = harness.run([(e["type"], CONFORMANCE / "invalid" / name) for name, e in schema_errors])
    for (name, expect), got in zip(schema_errors, outcomes, strict=True):
        try:
            es.load(CONFORMANCE / "invalid" / name, getattr(es, expect["type"]))
        except es.ExternSpecError as e:
            python_message = str(e).split(": ", 1)[1]
        # The harness prints one line: the first problem and how many more (both decoders stop a
        # list or map at its first bad element, so the counts agree too).
        assert got.message == python_message.split("\n")[0], f"{harness.build}: invalid/{name}"


def test_strict_rejects_unknown_keys_everywhere(harness) -> None:
    path = CONFORMANCE / "valid" / "nesting_at_limit.json"
    with pytest.raises(es.DecodeError) as info:
        es.loads(path.read_bytes(), es.Device, strict=True)
    got = harness.one("Device", path, strict=True)
    assert (got.kind, got.path) == ("DecodeError", info.value.path) == ("DecodeError", "$")
    assert got.message == str(info.value) == "$: unknown key `ignored`"
