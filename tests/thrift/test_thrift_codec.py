"""Thrift binary and compact codecs: round trips, interop with thriftpy2, and bad input.

thriftpy2 loads the same IDL independently of our code generator, so agreement with it (both ways,
byte for byte) is evidence that any Thrift implementation reads our files.
"""

from __future__ import annotations

import contextlib
import json
import re
import struct
import tracemalloc
from pathlib import Path

import pytest
import thriftpy2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from thriftpy2.protocol import TBinaryProtocolFactory, TCompactProtocolFactory
from thriftpy2.utils import deserialize, serialize

import externspec as es
from externspec import thrift as tc
from tests.support.paths import IDL, PAYLOADS
from tests.support.strategies import any_floats, documents
from tests.support.versions import CURRENT, CURRENT_TEXT

FACTORIES = {"binary": TBinaryProtocolFactory(), "compact": TCompactProtocolFactory()}
DOC_TYPES = [es.ExternKernelNodes, es.ExportedProgram, es.Node, es.Argument, es.Graph]


@pytest.fixture(scope="module")
def idl_thrift():
    return thriftpy2.load(str(IDL), module_name="externspec_idl_thrift")


def sample_nodes() -> es.ExternKernelNodes:
    """Every kind of value the wire must carry: unions, optionals, bool fields and lists, enums,
    non-finite floats, maps, nested lists, and Argument's non-monotonic ids (as_graph 200 / 190)."""
    inf = float("inf")
    args = [
        ("self", es.Argument(as_tensor=es.TensorArgument(name="buf0"))),
        ("alpha", es.Argument(as_float=inf)),
        ("flags", es.Argument(as_bools=[True, False] * 9)),
        ("indices", es.Argument(as_optional_tensors=[
            es.OptionalTensorArgument(as_none=True),
            es.OptionalTensorArgument(as_tensor=es.TensorArgument(name="b"))])),
        ("dtype", es.Argument(as_scalar_type=es.ScalarType.FLOAT8E8M0FNU)),
        ("sizes", es.Argument(as_sym_ints=[es.SymIntArgument(as_name="s77 + 8"), es.SymIntArgument(as_int=-3)])),
        ("nested", es.Argument(as_string_to_argument={"k": es.Argument(as_int_lists=[[1, -(2**63)], []])})),
        ("big", es.Argument(as_ints=list(range(-20, 20)))),
        ("device", es.Argument(as_device=es.Device(type="cpu", index=None))),
        ("sub", es.Argument(as_graph=es.GraphArgument(name="g", graph=es.Graph(
            inputs=[], outputs=[], nodes=[], tensor_values={}, sym_int_values={}, sym_bool_values={})))),
    ]
    node = es.Node(target="ns::op.overload",
                   inputs=[es.NamedArgument(name=n, arg=a, kind=es.ArgumentKind.KEYWORD) for n, a in args],
                   outputs=[es.Argument(as_tensors=[es.TensorArgument(name="buf1")])],
                   metadata={"torch_library_custom_op": "1"}, is_hop_single_tensor_return=False)
    return es.ExternKernelNodes(nodes=[es.ExternKernelNode(name="buf1", node=node)] * 3,
                                schema_version=es.SchemaVersion(major=1, minor=0))


@pytest.mark.parametrize("protocol", tc.PROTOCOLS)
def test_round_trip_and_thriftpy2_byte_identity(protocol, idl_thrift):
    doc = sample_nodes()
    data = tc.dumps(doc, protocol)
    assert es.dumps(tc.loads(data, es.ExternKernelNodes, protocol)) == es.dumps(doc)
    # thriftpy2 reads our bytes, and writes exactly the same bytes back.
    theirs = deserialize(idl_thrift.ExternKernelNodes(), data, FACTORIES[protocol])
    assert theirs.nodes[0].node.inputs[4].arg.as_scalar_type == 33
    assert theirs.nodes[0].node.inputs[2].arg.as_bools == [True, False] * 9
    assert serialize(theirs, FACTORIES[protocol]) == data


@pytest.mark.parametrize("protocol", tc.PROTOCOLS)
def test_we_read_what_thriftpy2_writes(protocol, idl_thrift):
    t = idl_thrift
    node = t.Node(target="aten::add.Tensor",
                  inputs=[t.NamedArgument(name="self", arg=t.Argument(as_tensor=t.TensorArgument(name="x"))),
                          t.NamedArgument(name="alpha", arg=t.Argument(as_int=2), kind=1)],
                  outputs=[t.Argument(as_tensor=t.TensorArgument(name="y"))], metadata={})
    data = serialize(t.ExternKernelNodes(nodes=[t.ExternKernelNode(name="buf0", node=node)]), FACTORIES[protocol])
    doc = tc.loads(data, es.ExternKernelNodes, protocol)
    assert doc.schema_version is None
    n = doc.nodes[0].node
    assert (n.target, n.inputs[1].arg.as_int, n.inputs[1].kind, n.outputs[0].as_tensor.name) == (
        "aten::add.Tensor", 2, es.ArgumentKind.POSITIONAL, "y")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
@pytest.mark.parametrize("doc_type", DOC_TYPES, ids=lambda t: t.__name__)
def test_json_thrift_json_identity_on_generated_documents(doc_type, data, idl_thrift):
    doc = data.draw(documents(doc_type, depth=3, floats=any_floats))
    if doc_type is es.ExternKernelNodes:  # versions this reader accepts: none, or major 1
        doc = doc.model_copy(update={"schema_version": data.draw(
            st.none() | st.builds(es.SchemaVersion, major=st.just(1), minor=st.integers(0, 2**63 - 1)))})
    if doc_type is es.ExportedProgram:  # torch's: unversioned 0.0, or major 8
        major = data.draw(st.sampled_from([0, 8]))
        doc = doc.model_copy(update={"schema_version": es.SchemaVersion(major=major, minor=0)})
    text = es.dumps(doc)
    for protocol in tc.PROTOCOLS:
        wire = tc.dumps(es.loads(text, doc_type), protocol)
        assert es.dumps(tc.loads(wire, doc_type, protocol)) == text
        theirs = deserialize(getattr(idl_thrift, doc_type.__name__)(), wire, FACTORIES[protocol])
        assert serialize(theirs, FACTORIES[protocol]) == wire


@pytest.mark.parametrize("protocol", tc.PROTOCOLS)
def test_every_truncation_is_a_decode_error(protocol):
    data = tc.dumps(sample_nodes(), protocol)
    for cut in range(len(data)):
        with pytest.raises(es.DecodeError) as info:
            tc.loads(data[:cut], es.ExternKernelNodes, protocol)
        assert info.value.path.startswith("$")
    # Cut early, the nodes cannot fit in what is left: each takes at least its required fields.
    with pytest.raises(es.DecodeError, match=r"^\$\.nodes: list declares 3 elements of at least \d+ bytes each "
                                             r"but only \d+ bytes remain"):
        tc.loads(data[: {"binary": 30, "compact": 12}[protocol]], es.ExternKernelNodes, protocol)
    # Cut inside a long target: the count fits, the string does not.
    first = sample_nodes().nodes[0]
    long_target = first.model_copy(update={"node": first.node.model_copy(update={"target": "x" * 200})})
    data = tc.dumps(es.ExternKernelNodes(nodes=[long_target]), protocol)
    with pytest.raises(es.DecodeError, match=r"^\$\.nodes\[0\]\.node\.target: input truncated"):
        tc.loads(data[:100], es.ExternKernelNodes, protocol)


@pytest.mark.parametrize("protocol", tc.PROTOCOLS)
def test_the_call_layout_and_producer_of_schema_1_2_round_trip(protocol, idl_thrift):
    """Fields 30 and 40 of ExternKernelNodes: what thriftpy2 reads and writes back byte for byte; an
    enum number that names no CallLayout is refused at its path, as in JSON."""
    doc = sample_nodes().model_copy(update={"schema_version": es.SCHEMA_VERSION, "producer": "torch 2.13.0 (é)",
                                            "call_layout": es.CallLayout.OMITTED_DEFAULTS_PASSED})
    data = tc.dumps(doc, protocol)
    assert tc.loads(data, es.ExternKernelNodes, protocol) == doc
    theirs = deserialize(idl_thrift.ExternKernelNodes(), data, FACTORIES[protocol])
    assert (theirs.call_layout, theirs.producer) == (2, "torch 2.13.0 (é)")
    assert serialize(theirs, FACTORIES[protocol]) == data
    theirs.call_layout = 3
    with pytest.raises(es.DecodeError, match=r"^\$\.call_layout: "):
        tc.loads(serialize(theirs, FACTORIES[protocol]), es.ExternKernelNodes, protocol)


@pytest.mark.parametrize("protocol", tc.PROTOCOLS)
def test_a_list_of_empty_structs_is_refused_before_it_is_built(protocol):
    """One stop byte per element is not a node (each needs its required fields): refused at the
    list header, before a million dicts are built (it once took 2 GB and 14 s for 1 MB)."""
    n = 100_000
    if protocol == "compact":
        header = bytes([0xA9, 0xFC, 0xA0, 0x8D, 0x06])  # field 10, list of structs, count 100000 (varint)
    else:
        header = bytes([15]) + (10).to_bytes(2, "big") + bytes([12]) + n.to_bytes(4, "big")
    with pytest.raises(es.DecodeError, match=rf"^\$\.nodes: list declares {n} elements of at least \d+ bytes each"):
        tc.loads(header + b"\0" * n + b"\0", es.ExternKernelNodes, protocol)


@pytest.mark.parametrize("protocol", tc.PROTOCOLS)
def test_the_size_limit_applies_to_thrift_documents(protocol):
    """A Thrift document decodes to up to ~250x its size (dense lists of small structs in compact,
    SECURITY.md): it is refused over the JSON size limit, per call or by the process default."""
    doc = tc.dumps(es.Argument(as_tensors=[es.TensorArgument(name="")] * 1000), protocol)
    assert tc.loads(doc, es.Argument, protocol, max_bytes=len(doc)).as_tensors[0].name == ""
    for data in (doc, bytearray(doc), memoryview(doc)):
        with pytest.raises(es.DecodeError, match=rf"^\$: document of {len(doc)} bytes exceeds the size limit of "
                                                 rf"{len(doc) - 1} bytes$"):
            tc.loads(data, es.Argument, protocol, max_bytes=len(doc) - 1)


@settings(max_examples=300, deadline=None)
@given(position=st.integers(0, 10**6), byte=st.integers(0, 255), protocol=st.sampled_from(tc.PROTOCOLS))
def test_corrupted_bytes_raise_only_externspec_errors(position, byte, protocol):
    data = bytearray(tc.dumps(sample_nodes(), protocol))
    data[position % len(data)] = byte
    # Anything else (IndexError, struct.error, RecursionError, ...) fails the test.
    with contextlib.suppress(es.DecodeError, es.VersionError):
        tc.loads(bytes(data), es.ExternKernelNodes, protocol)


# Headers that announce far more than any input holds: binary i32 counts/lengths, compact varints.
_HUGE_HEADERS = [(2**31 - 1).to_bytes(4, "big"), (2**32 - 1).to_bytes(4, "big"), b"\x0c\x7f\xff\xff\xff",
                 b"\x0b\x7f\xff\xff\xff", b"\xff\xff\xff\xff\x0f", b"\xfc\xff\xff\xff\xff\x0f",
                 b"\x80" * 9 + b"\x01", b"\xff" * 10]


@st.composite
def _damaged(draw: st.DrawFn, data: bytes) -> bytes:
    """One to three of: a byte flipped, bytes inserted, a huge list/string header written over or
    into the encoding, truncation."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(out)))
        kind = draw(st.sampled_from(["flip", "insert", "header", "header_over", "truncate"]))
        if kind == "flip" and out:
            out[min(at, len(out) - 1)] ^= 1 << draw(st.integers(0, 7))
        elif kind == "insert":
            out[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "header":
            out[at:at] = draw(st.sampled_from(_HUGE_HEADERS))
        elif kind == "header_over":
            header = draw(st.sampled_from(_HUGE_HEADERS))
            out[at:at + len(header)] = header
        else:
            del out[at:]
    return bytes(out)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
@pytest.mark.parametrize("protocol", tc.PROTOCOLS)
def test_damaged_encodings_fail_only_with_decode_errors_in_bounded_memory(protocol, data):
    """Valid encodings of generated documents, damaged: decoded, or refused with a DecodeError /
    VersionError that names a path, never another exception; and what decoding allocates is bounded
    by the input, not by the counts and lengths its headers announce."""
    doc_type = data.draw(st.sampled_from(DOC_TYPES))
    wire = tc.dumps(data.draw(documents(doc_type, depth=2, floats=any_floats)), protocol)
    damaged = data.draw(_damaged(wire))
    tracemalloc.start()
    try:
        try:
            tc.loads(damaged, doc_type, protocol)
        except es.DecodeError as exc:
            assert exc.errors() and all(e["path"].startswith("$") for e in exc.errors()), exc.errors()
        except es.VersionError as exc:
            assert str(exc)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # The models of a small document plus the parser's frames: well under 1 MB for inputs of a few KB.
    assert peak <= 1_000_000 + 200 * len(damaged), (peak, len(damaged))


@pytest.mark.parametrize("protocol", tc.PROTOCOLS)
@pytest.mark.parametrize("key", ["\x01", 'a"b', "\\", "\u00e9", "(x)"])
def test_a_map_key_in_an_error_path_is_written_as_json_writes_it(protocol, key):
    """A map key in the path of a problem is a JSON string, as the JSON decoder writes it: a
    control character in a metadata key once escaped as a JSONDecodeError (the path could not be
    read back), and a quote or backslash gave a path that named the map, not the key."""
    data = tc.dumps(es.Node(target="t", inputs=[], outputs=[], metadata={key: "value"}), protocol)
    with pytest.raises(es.DecodeError) as info:
        tc.loads(data[: data.index(b"value") + 2], es.Node, protocol)
    assert info.value.errors()[0]["path"] == f"$.metadata[{json.dumps(key)}]"
    assert info.value.errors()[0]["loc"] == ("metadata", key)


@pytest.mark.parametrize("protocol", tc.PROTOCOLS)
def test_union_needs_exactly_one_member(protocol, idl_thrift):
    t = idl_thrift
    for arg, message in ((t.Argument(), r"got 0"), (t.Argument(as_int=1, as_float=2.0), r"got 2 \(as_int, as_float\)")):
        node = t.Node(target="x", inputs=[t.NamedArgument(name="a", arg=arg)], outputs=[], metadata={})
        data = serialize(t.ExternKernelNodes(nodes=[t.ExternKernelNode(name="b", node=node)]), FACTORIES[protocol])
        with pytest.raises(es.DecodeError) as info:
            tc.loads(data, es.ExternKernelNodes, protocol)
        assert info.value.path == "$.nodes[0].node.inputs[0].arg"
        assert "exactly one member of `Argument`" in str(info.value)
        assert pytest.importorskip("re").search(message, str(info.value))


@pytest.fixture(scope="module")
def newer_idl(tmp_path_factory):
    """The IDL with a field that this reader does not know: Node gets `999: optional i64 future`."""
    old = "  60: optional string name;\n}"
    text = IDL.read_text().replace(old, old[:-1] + "  999: optional i64 future;\n}", 1)
    assert "999" in text
    path = tmp_path_factory.mktemp("idl") / "newer.thrift"
    path.write_text(text)
    return thriftpy2.load(str(path), module_name="externspec_newer_thrift")


def _nodes_with_unknown(t, protocol, version):
    node = t.Node(target="x", inputs=[], outputs=[], metadata={}, future=7)
    return serialize(t.ExternKernelNodes(nodes=[t.ExternKernelNode(name="b", node=node)], schema_version=version),
                     FACTORIES[protocol])


@pytest.mark.parametrize("protocol", tc.PROTOCOLS)
def test_torch_written_errors_are_the_lenient_readings_as_in_json(protocol, newer_idl):
    """An unversioned document with an unknown field and a real problem: Thrift reports what JSON
    reports (the real problem only; unknown keys are ignored in a torch-written document), through
    the one decode decision (wire.decision.validate_document). Before, Thrift listed the unknown key too."""
    t = newer_idl
    node = t.Node(target="x", inputs=[], outputs=[], metadata={}, future=7)
    data = serialize(t.ExternKernelNodes(nodes=[t.ExternKernelNode(name=None, node=node)]), FACTORIES[protocol])
    with pytest.raises(es.DecodeError) as from_thrift:
        tc.loads(data, es.ExternKernelNodes, protocol)
    text = '{"nodes": [{"node": {"target": "x", "inputs": [], "outputs": [], "metadata": {}, "future": 7}}]}'
    with pytest.raises(es.DecodeError) as from_json:
        es.loads(text, es.ExternKernelNodes)
    assert from_thrift.value.errors() == from_json.value.errors()
    assert [e["message"] for e in from_json.value.errors()] == ["missing required field `name`"]


@pytest.mark.parametrize("protocol", tc.PROTOCOLS)
def test_unknown_field_ids(protocol, newer_idl):
    t = newer_idl
    # Torch-written (unversioned): skipped, as Thrift and torch do.
    doc = tc.loads(_nodes_with_unknown(t, protocol, None), es.ExternKernelNodes, protocol)
    assert doc.nodes[0].node.target == "x"
    # strict: named, with its path.
    with pytest.raises(es.DecodeError, match=r"\$\.nodes\[0\]\.node: unknown key `field id 999`"):
        tc.loads(_nodes_with_unknown(t, protocol, None), es.ExternKernelNodes, protocol, strict=True)
    # A newer minor that added it: a VersionError naming both versions.
    with pytest.raises(es.VersionError, match=rf"field id 999.*schema {re.escape(CURRENT_TEXT)}.*schema 1\.3"):
        tc.loads(_nodes_with_unknown(t, protocol, t.SchemaVersion(major=1, minor=3)), es.ExternKernelNodes, protocol)
    # The same minor cannot have fields this reader lacks: corrupt.
    with pytest.raises(es.DecodeError, match="unknown key `field id 999`"):
        tc.loads(_nodes_with_unknown(t, protocol, t.SchemaVersion(**CURRENT)), es.ExternKernelNodes, protocol)
    # Unversioned types ignore it.
    node = tc.loads(serialize(t.Node(target="y", inputs=[], outputs=[], metadata={}, future=1), FACTORIES[protocol]),
                    es.Node, protocol)
    assert node.target == "y"


@pytest.mark.parametrize("protocol", tc.PROTOCOLS)
def test_newer_major_is_a_version_error(protocol):
    doc = es.ExternKernelNodes(nodes=[], schema_version=es.SchemaVersion(major=2, minor=0))
    with pytest.raises(es.VersionError, match="major version 2"):
        tc.loads(tc.dumps(doc, protocol), es.ExternKernelNodes, protocol)


def test_binary_specific_corruptions():
    good = tc.dumps(es.Node(target="t", inputs=[], outputs=[], metadata={}), "binary")
    # The target field (id 10) sent as an i64: a known id with another wire type.
    wrong = struct.pack(">bhq", 10, 10, 5) + good[good.index(b"\x0f"):]
    with pytest.raises(es.DecodeError, match=r"^\$\.target: field 10 \(`target`\) has wire type i64, expected string"):
        tc.loads(wrong, es.Node, "binary")
    with pytest.raises(es.DecodeError, match="trailing bytes"):
        tc.loads(good + b"\x00", es.Node, "binary")
    with pytest.raises(es.DecodeError, match="invalid UTF-8"):
        tc.loads(good.replace(b"\x00\x00\x00\x01t", b"\x00\x00\x00\x01\xff"), es.Node, "binary")
    # A list that claims two billion elements.
    huge = good.replace(b"\x0f\x00\x14\x0c\x00\x00\x00\x00", b"\x0f\x00\x14\x0c\x7f\xff\xff\xff")
    with pytest.raises(es.DecodeError, match=r"^\$\.inputs: list declares 2147483647 elements"):
        tc.loads(huge, es.Node, "binary")
    bad_enum = tc.dumps(es.Argument(as_scalar_type=es.ScalarType.LONG), "binary").replace(
        b"\x00\x00\x00\x05", b"\x00\x00\x00\x0e")
    with pytest.raises(es.DecodeError, match=r"^\$\.as_scalar_type: invalid enum value 14 for `ScalarType`"):
        tc.loads(bad_enum, es.Argument, "binary")


@pytest.mark.parametrize("protocol", tc.PROTOCOLS)
def test_nesting_bomb_is_a_decode_error_not_a_recursion_error(protocol):
    arg = es.Argument(as_int=1)
    for _ in range(150):  # 2 levels each (map + union): 300 > MAX_JSON_DEPTH
        arg = es.Argument(as_string_to_argument={"k": arg})
    data = tc.dumps(arg, protocol)
    with pytest.raises(es.DecodeError, match=f"nesting deeper than {es.MAX_JSON_DEPTH} levels"):
        tc.loads(data, es.Argument, protocol)


def test_unknown_protocol_is_named():
    with pytest.raises(ValueError, match="unknown Thrift protocol 'json'"):
        tc.dumps(sample_nodes(), "json")  # type: ignore[arg-type]


def test_older_major_binary_goes_through_the_upgraders(tmp_path: Path) -> None:
    """Under a 2.0 schema that renamed ExternKernelNode.name to `buffer` (id 10 kept; the worked
    example of tests/compat/test_upgrade.py), a 1.0 binary file reads: the id carries the rename,
    and the registered upgrader runs as it does for JSON."""
    from externspec.wire import upgrade
    from tests.support import schema_v2

    assert schema_v2.RENAMED_FROM in IDL.read_text()
    with schema_v2.v2_models(tmp_path, "externspec_codec_v2_models") as v2:
        v1_doc = sample_nodes()
        for protocol in tc.PROTOCOLS:
            data = tc.dumps(v1_doc, protocol)
            with pytest.raises(es.VersionError, match="major version 1"):
                tc.loads(data, v2.ExternKernelNodes, protocol)  # no upgrader registered
            with upgrade.registered("ExternKernelNodes", 1, schema_v2.rename_name_to_buffer):
                doc = tc.loads(data, v2.ExternKernelNodes, protocol)
            assert doc.nodes[0].buffer == "buf1"
            assert doc.nodes[0].node.inputs[1].arg.as_float == float("inf")
            # An upgrader that adds a key the reader lacks: the upgraded document is judged as
            # JSON's is (wire.decision._load_upgraded), the key named in a VersionError.
            with upgrade.registered("ExternKernelNodes", 1, lambda d: {**d, "added": 1}), \
                    pytest.raises(es.VersionError, match="the upgraders do not know") as left:
                tc.loads(data, v2.ExternKernelNodes, protocol)
            assert left.value.key == "added"


CORPUS = sorted(
    (index.parent / e["path"], e["type"])
    for index in PAYLOADS.glob("v*/index.json")
    for e in json.loads(index.read_text(encoding="utf-8"))
)


def _identity(raw: bytes, doc_type: type, idl_thrift) -> None:
    """JSON -> Thrift -> JSON gives the same JSON, and thriftpy2 re-encodes our bytes identically."""
    model = es.loads(raw, doc_type)
    for protocol in tc.PROTOCOLS:
        wire = tc.dumps(model, protocol)
        assert json.loads(es.dumps(tc.loads(wire, doc_type, protocol))) == json.loads(raw)
        theirs = deserialize(getattr(idl_thrift, doc_type.__name__)(), wire, FACTORIES[protocol])
        assert serialize(theirs, FACTORIES[protocol]) == wire


@pytest.mark.parametrize(("path", "type_name"), CORPUS, ids=lambda v: getattr(v, "name", v))
def test_identity_on_the_released_payloads(path, type_name, idl_thrift):
    _identity(path.read_bytes(), getattr(es, type_name), idl_thrift)


@pytest.mark.slow
def test_identity_on_real_torch_artifacts(idl_thrift):
    from tests.support import artifacts

    for name in sorted(artifacts.EXPORT_MODELS):
        _identity(artifacts.read_member(artifacts.exported_program(name), "models/model.json"), es.ExportedProgram,
                  idl_thrift)
    _identity(artifacts.read_member(artifacts.aoti_package(), ".wrapper.json"), es.ExternKernelNodes, idl_thrift)
