"""No model can hold what `es.loads` refuses: frozen fields, validated copies, and the version
policy on `model_validate_json` (the ways a document is built or enters besides `es.loads`)."""

from __future__ import annotations

import copy
import json
import pickle

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


def test_a_union_holds_only_its_member_and_reads_the_others_as_none() -> None:
    """A union instance stores just the member that is set (the decoded-program memory figure in
    docs/performance.md depends on it); every way of making one gives equal, equally hashed values."""
    made = [es.Argument(as_ints=[1, 2]), es.loads('{"as_ints": [1, 2]}', es.Argument),
            es.Argument.model_validate({"as_ints": [1, 2]}), es.Argument.model_construct(as_ints=[1, 2]),
            es.Argument(as_ints=[9]).model_copy(update={"as_ints": [1, 2]})]
    for arg in made:
        for other in (arg, pickle.loads(pickle.dumps(arg)), copy.deepcopy(arg), copy.copy(arg)):
            assert other == made[0] and vars(other) == {"as_ints": [1, 2]}
        assert arg.as_ints == [1, 2] and arg.as_int is None and arg.as_tensor is None
        assert arg.type == "as_ints" and arg.model_dump() == {"as_ints": [1, 2]}
        assert es.dumps(arg) == '{"as_ints":[1,2]}'
    frozen = es.SymInt(as_int=3)
    decoded, constructed = es.loads('{"as_int": 3}', es.SymInt), es.SymInt.model_construct(as_int=3)
    assert hash(frozen) == hash(decoded) == hash(constructed)
    with pytest.raises(AttributeError, match="as_inst"):
        made[0].as_inst  # noqa: B018 - not a member: still an AttributeError
