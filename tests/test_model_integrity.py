"""No model can hold what `es.loads` refuses: frozen fields, validated copies, and the version
policy on `model_validate_json` (the ways a document is built or enters besides `es.loads`)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

import externspec as es

SPEC = {"nodes": [{"name": "buf0", "node": {"target": "aten::relu.default",
                                            "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}},
                                                        "kind": 1}],
                                            "outputs": [{"as_tensor": {"name": "buf0"}}], "metadata": {}}}]}


def test_a_union_member_cannot_be_added_by_assignment() -> None:
    a = es.Argument(as_int=3)
    with pytest.raises(ValidationError, match="frozen"):
        a.as_float = 1.0  # type: ignore[misc]
    assert es.loads(es.dumps(a), es.Argument) == a


def test_a_struct_field_cannot_be_reassigned() -> None:
    nodes = es.loads(json.dumps(SPEC), es.ExternKernelNodes)
    with pytest.raises(ValidationError, match="frozen"):
        nodes.nodes[0].name = 123  # type: ignore[misc,assignment]
    assert '"name":"buf0"' in es.dumps(nodes)


def test_model_copy_with_update_is_validated() -> None:
    with pytest.raises(ValidationError, match="expected exactly one member of `Argument`, got 2"):
        es.Argument(as_int=3).model_copy(update={"as_float": 1.0})
    nodes = es.loads(json.dumps(SPEC), es.ExternKernelNodes)
    with pytest.raises(ValidationError):
        nodes.nodes[0].model_copy(update={"name": 123})
    stamped = nodes.model_copy(update={"schema_version": es.SCHEMA_VERSION})
    assert es.loads(es.dumps(stamped), es.ExternKernelNodes) == stamped
    assert es.Argument(as_int=3).model_copy(update={"as_int": 4}).value == 4


def test_model_validate_json_applies_the_version_policy() -> None:
    newer_major = {**SPEC, "schema_version": {"major": es.SCHEMA_VERSION.major + 1, "minor": 0}}
    with pytest.raises(es.VersionError, match="major"):
        es.ExternKernelNodes.model_validate_json(json.dumps(newer_major))
    newer_minor = {"nodes": [{**SPEC["nodes"][0], "future": 1}],
                   "schema_version": {"major": es.SCHEMA_VERSION.major, "minor": es.SCHEMA_VERSION.minor + 1}}
    with pytest.raises(es.VersionError, match="future"):
        es.ExternKernelNodes.model_validate_json(json.dumps(newer_minor))
    with pytest.raises(es.DecodeError, match=r"^\$\.nodes\[0\]\.name: expected `str`, got `int`"):
        es.ExternKernelNodes.model_validate_json('{"nodes": [{"name": 1, "node": {"target": "t"}}]}')
    assert es.ExternKernelNodes.model_validate_json(json.dumps(SPEC)) == es.loads(json.dumps(SPEC),
                                                                                   es.ExternKernelNodes)
