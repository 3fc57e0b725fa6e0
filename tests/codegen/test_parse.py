"""The front end keeps what thriftpy2's loaded module loses: requiredness, docs, columns, const types."""

from __future__ import annotations

import pytest

import externspec as es
from externspec.codegen import ir, parse_file, parse_text
from tests.support.paths import IDL


def test_optional_and_default_requiredness_are_distinct() -> None:
    # thriftpy2 alone reports both as required=False; this guards the grammar override.
    device = parse_file(IDL).type("Device")
    assert isinstance(device, ir.Struct)
    assert [(f.name, f.requiredness) for f in device.fields] == [("type", "default"), ("index", "optional")]


def test_required_keyword_is_kept() -> None:
    s = parse_text("struct S {\n  1: required i64 a;\n  2: i64 b;\n  3: optional i64 c;\n}").type("S")
    assert isinstance(s, ir.Struct)
    assert [f.requiredness for f in s.fields] == ["required", "default", "optional"]


def test_docs_lines_and_columns() -> None:
    text = "/** The point. */\nstruct P {\n  /** X coordinate. */\n  10: i64 x;\n}\n"
    p = parse_text(text, "p.thrift").type("P")
    assert isinstance(p, ir.Struct)
    assert p.doc == "The point." and str(p.loc) == "p.thrift:2:8"
    assert p.fields[0].doc == "X coordinate." and str(p.fields[0].loc) == "p.thrift:4:3"


def test_declaration_order_ids_and_nested_types() -> None:
    schema = parse_file(IDL)
    argument = schema.type("Argument")
    assert isinstance(argument, ir.Struct) and argument.kind == "union"
    assert len(argument.fields) == 31
    ids = [f.id for f in argument.fields]
    assert ids.index(200) < ids.index(190)  # torch's non-monotonic ids, in declaration order
    nested = argument.field("as_nested_tensors")
    assert nested is not None and str(nested.type) == "list<list<TensorArgument>>"
    to_arg = argument.field("as_string_to_argument")
    assert to_arg is not None and str(to_arg.type) == "map<string, Argument>"


def test_typedefs_resolve_to_structure() -> None:
    s = parse_text("typedef list<i64> Ints\nstruct S {\n  1: Ints a;\n}").type("S")
    assert isinstance(s, ir.Struct)
    assert s.fields[0].type == ir.TypeRef.list_of(ir.TypeRef.base("i64"))


def test_consts_keep_name_type_and_value() -> None:
    schema = parse_file(IDL)
    version = schema.const("SCHEMA_VERSION")
    assert version is not None and version.type == ir.TypeRef.named("SchemaVersion")
    assert schema.schema_version() == (es.SCHEMA_VERSION.major, es.SCHEMA_VERSION.minor)
    major = schema.const("TORCH_EXPORT_SCHEMA_MAJOR")
    assert major is not None and major.value == 8


@pytest.mark.parametrize(
    "idl",
    [
        # on the const's type: the form Apache Thrift's grammar accepts (the IDL's)
        'const map<string, list<string>> (members_of = "U") T = {"k": ["a"]}',
        'const list<string> (members_of = "U") T = ["a"]',
        'const string (members_of = "U") T = "a"',
        # after the value: thriftpy2 only (the releases frozen in schema/history/)
        'const list<string> T = ["a"] (members_of = "U")',
    ],
)
def test_a_consts_annotations_are_read_from_its_type_or_after_its_value(idl: str) -> None:
    const = parse_text(f"union U {{\n  1: i64 a;\n}}\n{idl}").const("T")
    assert const is not None and const.members_of == "U"


def test_a_type_annotation_elsewhere_does_not_reach_a_const() -> None:
    schema = parse_text('enum E {\n  A = 1,\n}\nstruct S {\n  1: list<string> (x = "y") a;\n}\n'
                        'const E T = 1\nconst list<i64> N = [1]')
    assert [c.annotations for c in schema.consts] == [(), ()]


def test_the_ir_is_frozen_and_comparable() -> None:
    assert parse_file(IDL) == parse_file(IDL)
    assert parse_file(IDL).checksum == parse_file(IDL).checksum


# Fields externspec adds to torch's structures (each omitted from the JSON when unset).
EXTENSIONS = {"ExternKernelNodes": ["schema_version", "call_layout", "producer"]}


def test_every_torch_export_type_is_covered() -> None:
    import torch._export.serde.schema as torch_schema

    ours = parse_file(IDL)
    for name in dir(torch_schema):
        obj = getattr(torch_schema, name)
        if isinstance(obj, type) and obj.__module__ == torch_schema.__name__ and not name.startswith("_"):
            ours_type = ours.get(name)
            assert ours_type is not None, f"torch's {name} is missing from the IDL"
            if isinstance(ours_type, ir.Struct):
                torch_fields = list(obj.__dataclass_fields__)
                assert [f.name for f in ours_type.fields] == torch_fields + EXTENSIONS.get(name, []), name
