"""The JSON wire rules of docs/wire-format.md, on the generated models."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

import externspec as es
from tests.support.versions import CURRENT, CURRENT_TEXT


def node_doc(arg: object, **extra: object) -> str:
    node = {"target": "aten::add.Tensor", "inputs": [{"name": "self", "arg": arg, "kind": 1}],
            "outputs": [{"as_tensor": {"name": "buf1"}}], "metadata": {}}
    return json.dumps({"nodes": [{"name": "buf1", "node": node}], **extra})


@pytest.mark.parametrize(
    ("arg", "path", "message"),
    [
        ({}, "$.nodes[0].node.inputs[0].arg", "expected exactly one member of `Argument`, got 0"),
        ({"as_int": 1, "as_float": 2.0}, "$.nodes[0].node.inputs[0].arg",
         "expected exactly one member of `Argument`, got 2 (as_float, as_int)"),
        ({"as_tensr": {"name": "x"}}, "$.nodes[0].node.inputs[0].arg", "unknown key `as_tensr`"),
        ({"as_int": "3"}, "$.nodes[0].node.inputs[0].arg.as_int", "expected `int`, got `str`"),
        ({"as_int": 3.0}, "$.nodes[0].node.inputs[0].arg.as_int", "expected `int`, got `float`"),
        ({"as_bool": 1}, "$.nodes[0].node.inputs[0].arg.as_bool", "expected `bool`, got `int`"),
        ({"as_int": None}, "$.nodes[0].node.inputs[0].arg", "member `as_int` of `Argument` is null"),
        ({"as_int": 2**63}, "$.nodes[0].node.inputs[0].arg.as_int", "integer 9223372036854775808 out of range"),
        ({"as_int": -(2**63) - 1}, "$.nodes[0].node.inputs[0].arg.as_int", "out of range"),
        ({"as_float": "inf"}, "$.nodes[0].node.inputs[0].arg.as_float", "expected `float`"),
        ({"as_scalar_type": 99}, "$.nodes[0].node.inputs[0].arg.as_scalar_type", "invalid enum value 99"),
        ({"as_tensor": {}}, "$.nodes[0].node.inputs[0].arg.as_tensor", "missing required field `name`"),
        ({"as_ints": [1, "2"]}, "$.nodes[0].node.inputs[0].arg.as_ints[1]", "expected `int`, got `str`"),
    ],
)
def test_rejections_name_the_json_path(arg: object, path: str, message: str) -> None:
    with pytest.raises(es.DecodeError) as info:
        es.loads(node_doc(arg), es.ExternKernelNodes)
    assert info.value.path == path
    assert message in str(info.value)
    assert str(info.value).startswith(f"{path}: ")


def test_missing_required_field_is_an_error_not_a_default() -> None:
    doc = {"nodes": [{"name": "b", "node": {"inputs": [], "outputs": [], "metadata": {}}}]}
    with pytest.raises(es.DecodeError, match=r"^\$\.nodes\[0\]\.node: missing required field `target`$"):
        es.loads(json.dumps(doc), es.ExternKernelNodes)


def test_map_keys_are_quoted_in_paths() -> None:
    arg = {"as_string_to_argument": {"a b": {"as_int": "x"}}}
    with pytest.raises(es.DecodeError) as info:
        es.loads(json.dumps(arg), es.Argument)
    assert info.value.path == '$.as_string_to_argument["a b"].as_int'


def test_every_error_is_reported() -> None:
    doc = {"nodes": [{"name": 1, "node": {"target": 2, "inputs": [], "outputs": [], "metadata": {}}}]}
    with pytest.raises(es.DecodeError) as info:
        es.loads(json.dumps(doc), es.ExternKernelNodes)
    assert [e["path"] for e in info.value.errors()] == ["$.nodes[0].name", "$.nodes[0].node.target"]
    assert "(and 1 more)" in str(info.value)


def test_not_json_is_a_decode_error() -> None:
    with pytest.raises(es.DecodeError, match="EOF while parsing"):
        es.loads('{"nodes": [', es.ExternKernelNodes)


def nested_argument(depth: int) -> str:
    return '{"as_string_to_argument": {"k": ' * depth + '{"as_int": 1}' + "}}" * depth


def test_nesting_within_the_limit_decodes() -> None:
    # Each Argument level is two JSON levels (the union object and the map).
    depth = es.MAX_JSON_DEPTH // 2 - 1
    arg = es.loads(nested_argument(depth), es.Argument)
    for _ in range(depth):
        arg = arg.as_string_to_argument["k"]  # type: ignore[index]
    assert arg.as_int == 1


def test_nesting_beyond_the_limit_is_a_decode_error_not_a_recursion_error() -> None:
    with pytest.raises(es.DecodeError, match=f"nesting deeper than {es.MAX_JSON_DEPTH} levels"):
        es.loads(nested_argument(100_000), es.Argument)


def test_torch_conventions_are_accepted() -> None:
    doc = {"nodes": [{"name": "b", "node": {
        "target": "ns::op",
        "inputs": [
            {"name": "a", "arg": {"as_float": 2}},  # int in a float position, no `kind`
            {"name": "b", "arg": {"as_floats": ["Infinity", "-Infinity", "NaN", 0.5]}},
        ],
        "outputs": [], "metadata": {}}}]}  # no is_hop_single_tensor_return, no name
    nodes = es.loads(json.dumps(doc), es.ExternKernelNodes)
    node = nodes.nodes[0].node
    assert node.inputs[0].arg.as_float == 2.0 and node.inputs[0].kind is None
    floats = node.inputs[1].arg.as_floats
    assert floats is not None
    assert floats[0] == math.inf and floats[1] == -math.inf and math.isnan(floats[2])
    assert node.name is None and node.is_hop_single_tensor_return is None


def test_dumps_writes_torch_json() -> None:
    arg = es.NamedArgument(name="alpha", arg=es.Argument(as_float=math.inf))
    assert es.dumps(arg) == '{"name":"alpha","arg":{"as_float":"Infinity"},"kind":null}'
    device = es.Argument(as_device=es.Device(type="cpu"))
    assert es.dumps(device) == '{"as_device":{"type":"cpu","index":null}}'
    assert es.dumps(es.Argument(as_scalar_type=es.ScalarType.LONG)) == '{"as_scalar_type":5}'


def test_schema_version_is_omitted_when_unset_and_written_when_set() -> None:
    assert es.dumps(es.ExternKernelNodes(nodes=[])) == '{"nodes":[]}'
    stamped = es.ExternKernelNodes(nodes=[], schema_version=es.SCHEMA_VERSION)
    assert es.dumps(stamped) == '{"nodes":[],"schema_version":' + json.dumps(CURRENT, separators=(",", ":")) + "}"


def test_round_trip_keeps_non_finite_floats(tmp_path: Path) -> None:
    arg = es.Argument(as_floats=[math.inf, -math.inf, 1.5])
    es.dump(arg, tmp_path / "a.json")
    assert es.load(tmp_path / "a.json", es.Argument) == arg


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"as_int": "x"}')
    with pytest.raises(es.DecodeError, match=rf"^{path}: \$\.as_int: expected `int`"):
        es.load(path, es.Argument)


class TestUnknownKeys:
    def test_ignored_in_torch_written_documents(self) -> None:
        nodes = es.loads(node_doc({"as_int": 1}, future_key=1), es.ExternKernelNodes)
        assert nodes.nodes[0].node.inputs[0].arg.as_int == 1

    def test_ignored_in_unversioned_types(self) -> None:
        assert es.loads('{"name": "x", "future": 1}', es.TensorArgument).name == "x"

    def test_rejected_with_strict(self) -> None:
        with pytest.raises(es.DecodeError, match=r"^\$: unknown key `future`$"):
            es.loads('{"name": "x", "future": 1}', es.TensorArgument, strict=True)

    def test_rejected_in_a_versioned_document_of_this_version(self) -> None:
        doc = node_doc({"as_int": 1}, future_key=1, schema_version=CURRENT)
        with pytest.raises(es.DecodeError, match="unknown key `future_key`"):
            es.loads(doc, es.ExternKernelNodes)

    def test_newer_minor_with_unknown_key_is_a_version_error(self) -> None:
        doc = node_doc({"as_int": 1}, schema_version={"major": 1, "minor": 7})
        doc = doc.replace('"kind": 1', '"kind": 1, "slot": 3')
        with pytest.raises(es.VersionError) as info:
            es.loads(doc, es.ExternKernelNodes)
        message = str(info.value)
        assert "$.nodes[0].node.inputs[0]" in message and "`slot`" in message
        assert "1.7" in message and CURRENT_TEXT in message


class TestVersions:
    def test_newer_minor_without_unknown_keys_is_read(self) -> None:
        nodes = es.loads(node_doc({"as_int": 1}, schema_version={"major": 1, "minor": 9}), es.ExternKernelNodes)
        assert nodes.schema_version == es.SchemaVersion(major=1, minor=9)

    def test_newer_major_is_a_version_error_naming_both_versions(self) -> None:
        with pytest.raises(es.VersionError, match=rf"schema 2\.0 .* reader \(schema {re.escape(CURRENT_TEXT)}\)"):
            es.loads(node_doc({"as_int": 1}, schema_version={"major": 2, "minor": 0}), es.ExternKernelNodes)

    def test_newer_major_with_a_changed_shape_is_still_a_version_error(self) -> None:
        doc = json.dumps({"kernels": [], "schema_version": {"major": 3, "minor": 1}})
        with pytest.raises(es.VersionError, match=r"schema 3\.1"):
            es.loads(doc, es.ExternKernelNodes)

    def test_exported_program_is_checked_against_torchs_major(self) -> None:
        doc = json.loads(EMPTY_PROGRAM)
        doc["schema_version"] = {"major": 9, "minor": 0}
        with pytest.raises(es.VersionError, match=r"torch export schema 9\.0 is not major 8"):
            es.loads(json.dumps(doc), es.ExportedProgram)
        doc["schema_version"] = {"major": 8, "minor": 99}
        assert es.loads(json.dumps(doc), es.ExportedProgram).schema_version.minor == 99


EMPTY_PROGRAM = json.dumps({
    "graph_module": {
        "graph": {"inputs": [], "outputs": [], "nodes": [], "tensor_values": {}, "sym_int_values": {},
                  "sym_bool_values": {}},
        "signature": {"input_specs": [], "output_specs": []},
        "module_call_graph": [],
    },
    "opset_version": {}, "range_constraints": {}, "schema_version": {"major": 8, "minor": 20},
})


def test_defaults_fill_missing_keys_as_torch_does() -> None:
    program = es.loads(EMPTY_PROGRAM, es.ExportedProgram)
    assert program.torch_version == "<=2.4" and program.verifiers == [] and program.guards_code == []
    assert program.graph_module.graph.is_single_tensor_return is False
    assert program.graph_module.metadata == {}


@pytest.mark.parametrize("value", ["true", "5.0", "1e0", '"5"'])
def test_enums_are_json_integers_only(value: str) -> None:
    # pydantic's own enum validation takes true/5.0/1e0 for a member even in strict mode.
    with pytest.raises(es.DecodeError) as info:
        es.loads(f'{{"as_scalar_type": {value}}}', es.Argument)
    assert info.value.path == "$.as_scalar_type"


def test_bare_nan_literal_is_rejected_with_the_fix() -> None:
    with pytest.raises(es.DecodeError, match='write "NaN", "Infinity" or "-Infinity"'):
        es.loads('{"as_float": NaN}', es.Argument)
    assert math.isinf(es.Argument(as_float=math.inf).as_float or 0.0)  # Python values may be non-finite


@pytest.mark.parametrize(("err", "tp", "message"), [
    ({"type": "less_than_equal", "input": 2**63, "ctx": {"le": 2**63 - 1}}, None,
     f"integer {2**63} out of range (input should be less than or equal to {2**63 - 1})"),
    ({"type": "greater_than_equal", "input": -(2**63) - 1, "ctx": {"ge": -(2**63)}}, None,
     f"integer {-(2**63) - 1} out of range (input should be greater than or equal to {-(2**63)})"),
    ({"type": "enum", "input": 3, "ctx": {"expected": "(pydantic's list)"}}, es.ArgumentKind,
     "invalid enum value 3: input should be 0, 1 or 2"),
    ({"type": "int_type", "input": "x"}, None, "expected `int`, got `str`"),
    ({"type": "missing", "input": {}, "loc": ("nodes", 0, "name")}, None, "missing required field `name`"),
    ({"type": "extra_forbidden", "input": 1, "loc": ("extra",)}, None, "unknown key `extra`"),
])
def test_messages_are_externspecs_words_not_pydantics(err: dict, tp: object, message: str) -> None:
    """pydantic's error *types* map onto externspec's sentences; its `msg` text is never read for
    them, so a pydantic release that rewords its messages changes nothing here."""
    from externspec.wire import errors

    assert errors._message({**err, "msg": "A PYDANTIC SENTENCE"}, tp) == message
