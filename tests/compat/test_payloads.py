"""Documents written by every released version keep decoding (tests/compat/payloads/vX.Y/).

The index files are language-neutral so that the C++ decoder's tests can iterate the same list
(see payloads/README.md).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import externspec as es
from tests.support.paths import PAYLOADS


def payloads() -> list[tuple[str, dict[str, str]]]:
    """(version folder, index entry) for every stored document."""
    out = []
    for index in sorted(PAYLOADS.glob("v*/index.json")):
        out += [(index.parent.name, entry) for entry in json.loads(index.read_text(encoding="utf-8"))]
    return out


CASES = payloads()


def _contains(full: Any, part: Any, path: str = "$") -> None:
    """Every value of `part` (an older writer's document) is in `full` (what we re-encode):
    newer minors may add keys, never drop or change one."""
    if isinstance(part, dict):
        assert isinstance(full, dict), path
        for k, v in part.items():
            assert k in full, f"{path}.{k} was dropped"
            _contains(full[k], v, f"{path}.{k}")
    elif isinstance(part, list):
        assert isinstance(full, list) and len(full) == len(part), path
        for i, (a, b) in enumerate(zip(full, part, strict=True)):
            _contains(a, b, f"{path}[{i}]")
    else:
        assert full == part, f"{path}: {full!r} != {part!r}"


def test_v1_0_payloads_exist() -> None:
    types = {entry["type"] for version, entry in CASES if version == "v1.0"}
    assert {"ExternKernelNodes", "ExternKernelNode", "ExportedProgram"} <= types


@pytest.mark.parametrize(("version", "entry"), CASES, ids=[f"{v}/{e['path']}" for v, e in CASES])
def test_payload_decodes(version: str, entry: dict[str, str]) -> None:
    path = PAYLOADS / version / entry["path"]
    type_ = getattr(es, entry["type"])
    model = es.load(path, type_)
    encoded = es.dumps(model)
    assert es.loads(encoded, type_) == model
    _contains(json.loads(encoded), json.loads(path.read_text(encoding="utf-8")))


def test_torch_written_extern_file_is_read_under_the_baseline() -> None:
    nodes = es.load(PAYLOADS / "v1.0/extern_nodes_torch.json", es.ExternKernelNodes)
    assert nodes.schema_version is None  # torch writes none: read as 1.0
    assert [n.node.target for n in nodes.nodes] == ["externspec_fixture::scale_shift",
                                                    "externspec_fixture::split_parts"]
    dtype = next(i.arg for i in nodes.nodes[1].node.inputs if i.name == "dtype")
    assert dtype.as_scalar_type == es.ScalarType.DOUBLE


def _newer_minor_doc(extra_at_node: bool) -> dict[str, Any]:
    doc = json.loads((PAYLOADS / "v1.0/extern_nodes_externspec.json").read_text(encoding="utf-8"))
    doc["schema_version"] = {"major": es.SCHEMA_VERSION.major, "minor": es.SCHEMA_VERSION.minor + 1}
    if extra_at_node:
        doc["nodes"][1]["node"]["stream_priority"] = 3
    else:
        doc["checksum"] = "abc"
    return doc


@pytest.mark.parametrize(("extra_at_node", "key", "path"), [
    (False, "checksum", "$"),
    (True, "stream_priority", "$.nodes[1].node"),
])
def test_newer_minor_with_unknown_field_is_a_version_error(extra_at_node: bool, key: str, path: str) -> None:
    doc = _newer_minor_doc(extra_at_node)
    reader = f"{es.SCHEMA_VERSION.major}.{es.SCHEMA_VERSION.minor}"
    writer = f"{es.SCHEMA_VERSION.major}.{es.SCHEMA_VERSION.minor + 1}"
    with pytest.raises(es.VersionError) as err:
        es.loads(json.dumps(doc), es.ExternKernelNodes, source="future.json")
    msg = str(err.value)
    assert msg.startswith(f"future.json: {path}: key `{key}` is unknown to schema {reader}")
    assert f"written with schema {writer}" in msg


def test_newer_minor_without_unknown_fields_is_read() -> None:
    doc = _newer_minor_doc(False)
    del doc["checksum"]
    nodes = es.loads(json.dumps(doc), es.ExternKernelNodes)
    assert nodes.schema_version.minor == es.SCHEMA_VERSION.minor + 1
    assert len(nodes.nodes) == 2


def test_same_version_with_unknown_field_is_a_decode_error() -> None:
    """A document that claims this reader's own version has no excuse for an unknown key."""
    doc = _newer_minor_doc(True)
    doc["schema_version"] = {"major": es.SCHEMA_VERSION.major, "minor": es.SCHEMA_VERSION.minor}
    with pytest.raises(es.DecodeError) as err:
        es.loads(json.dumps(doc), es.ExternKernelNodes)
    assert err.value.path == "$.nodes[1].node"
    assert "unknown key `stream_priority`" in str(err.value)


def test_strict_rejects_unknown_keys_as_decode_errors() -> None:
    """`strict=True` rejects unknown keys everywhere, without version reasoning."""
    with pytest.raises(es.DecodeError, match="unknown key `checksum`"):
        es.loads(json.dumps(_newer_minor_doc(False)), es.ExternKernelNodes, strict=True)
    torch_written = json.loads((PAYLOADS / "v1.0/extern_nodes_torch.json").read_text(encoding="utf-8"))
    torch_written["future_torch_key"] = 1
    assert len(es.loads(json.dumps(torch_written), es.ExternKernelNodes).nodes) == 2  # ignored, as torch does
    with pytest.raises(es.DecodeError, match="unknown key `future_torch_key`"):
        es.loads(json.dumps(torch_written), es.ExternKernelNodes, strict=True)
