"""The lint pass: what thriftpy2 accepts but externspec cannot honour, each with file:line:col."""

from __future__ import annotations

import pytest

import externspec as es
from externspec.codegen import SchemaError, lint, parse_text
from tests.support.paths import IDL

VERSION = 'struct SchemaVersion { 10: i64 major; 20: i64 minor; }\n' \
          'const SchemaVersion SCHEMA_VERSION = {"major": 1, "minor": 0}\n'


def problems(idl: str) -> list[str]:
    text = VERSION + idl
    try:
        lint(parse_text(text, "t.thrift"), text)
    except SchemaError as e:
        return str(e).splitlines()
    return []


@pytest.mark.parametrize(
    ("idl", "expected"),
    [
        ("enum E {\n  A = 1,\n  B = 1,\n}", 't.thrift:5:3: duplicate enum value 1 in enum "E": "B" and "A"'),
        ("struct S {\n  70000: i64 x;\n}", 't.thrift:4:3: field id 70000 of "S.x" is out of range 1..32767'),
        ("struct S {\n  i64 x;\n}", 't.thrift:4:7: field "x" of struct "S" needs an explicit id in 1..32767'),
        ("union U {\n  1: required i64 a;\n}", 't.thrift:4:3: union member "U.a" may not be required'),
        ("union U {\n  1: i64 a = 3;\n}", 't.thrift:4:3: union member "U.a" may not have a default'),
        ("union U {\n  1: i64 value;\n}", 't.thrift:4:3: union member name "value" in "U" is reserved'),
        ("struct S {\n  1: map<i64, string> m;\n}",
         't.thrift:4:3: field "S.m": map key type i64 is not string (JSON object keys are strings)'),
        ("struct S {\n  1: binary b;\n}",
         't.thrift:4:3: field "S.b": binary is not supported by the JSON wire format'),
        ("struct S {\n  1: i64 model_config;\n}",
         't.thrift:4:3: field name "model_config" in "S" is reserved by the Python models'),
        ("struct S {\n  1: i64 auto;\n}", 't.thrift:4:3: field name "auto" in "S" is a reserved word'),
        ("struct S {\n  1: i64 a;\n}\nunion S {\n  1: i64 b;\n}",
         't.thrift:6:7: type "S" is declared twice (first at line 3)'),
        ("struct S {\n  1: i64 a (json.omitt = \"1\");\n}",
         't.thrift:4:3: unknown annotation "json.omitt" on field "S.a"'),
        ("struct S {\n  1: i64 a (json.omit_if_null = \"true\");\n}",
         't.thrift:4:3: json.omit_if_null needs an optional field ("S.a")'),
        # version_policy: a known policy, on a struct with the schema_version field it reads
        ('struct D {\n  1: optional SchemaVersion schema_version;\n} (version_policy = "semver")',
         't.thrift:3:8: version_policy "semver" on "D" is not one of externspec, torch_export'),
        ('struct D {\n  1: SchemaVersion schema_version;\n} (version_policy = "externspec")',
         't.thrift:3:8: version_policy "externspec" on "D" needs a field "optional SchemaVersion schema_version"'),
        ('struct D {\n  1: SchemaVersion schema_version;\n} (version_policy = "torch_export")',
         't.thrift:3:8: version_policy "torch_export" on "D" needs const i64 TORCH_EXPORT_SCHEMA_MAJOR'),
        ('union D {\n  1: i64 a;\n} (version_policy = "externspec")',
         't.thrift:3:7: version_policy applies to structs, not to "D"'),
        # members_of: a table may name only members of the union
        ('union A {\n  1: i64 as_int;\n}\nconst list<string> (members_of = "A") T = ["as_int", "as_float"]',
         't.thrift:6:39: const "T" names "as_float", which is not a member of union "A"'),
        ('const map<string, string> (members_of = "Nope") T = {"x": "y"}',
         't.thrift:3:49: members_of "Nope" on const "T" is not a union'),
        ('const i64 T = 1 (unit = "ms")', 't.thrift:3:11: unknown annotation "unit" on const "T"'),
        # what the C++ emitter cannot define
        ("union A {\n  1: B b;\n}\nunion B {\n  1: A a;\n}",
         't.thrift:3:7: types A -> B -> A hold each other by value; a struct field must break the cycle'),
        ("union U {\n  1: i64 tag;\n}", 't.thrift:4:3: union member name "tag" in "U" is reserved'),
    ],
)
def test_each_rule_reports_a_located_error(idl: str, expected: str) -> None:
    assert expected in problems(idl)


def test_the_cpp_namespace_is_externspec() -> None:
    text = "namespace cpp other\n" + VERSION
    with pytest.raises(SchemaError, match=r't\.thrift:1:1: the C\+\+ runtime lives in namespace externspec; the '
                                          r'IDL asks for "other"'):
        lint(parse_text(text, "t.thrift"), text)


def test_every_problem_is_reported_in_file_order() -> None:
    found = problems("struct S {\n  1: i64 auto;\n  2: map<i64, i64> m;\n}")
    assert found == [
        't.thrift:4:3: field name "auto" in "S" is a reserved word',
        't.thrift:5:3: field "S.m": map key type i64 is not string (JSON object keys are strings)',
    ]


def test_missing_schema_version_is_reported() -> None:
    text = "struct S {\n  1: i64 a;\n}"
    with pytest.raises(SchemaError, match=r"t\.thrift:1:1: missing const SchemaVersion SCHEMA_VERSION"):
        lint(parse_text(text, "t.thrift"), text)


@pytest.mark.parametrize(
    ("idl", "expected"),
    [
        ("struct S {\n  1: i64 from;\n}", "t.thrift:2:10: Cannot use reserved language keyword: 'from'"),
        ("struct S {\n  1: Missing m;\n}", "t.thrift:2"),
        ("struct S {\n  1: i64 a\n  1: i64 b;\n}", "t.thrift"),
        ("struct S {", "Grammar error at EOF"),
    ],
)
def test_syntax_errors_are_located(idl: str, expected: str) -> None:
    with pytest.raises(SchemaError) as info:
        parse_text(idl, "t.thrift")
    assert expected in str(info.value)
    assert "at line" not in str(info.value)


def test_the_project_idl_is_clean() -> None:

    from externspec.codegen import load_schema

    schema = load_schema(str(IDL))
    assert schema.schema_version() == (es.SCHEMA_VERSION.major, es.SCHEMA_VERSION.minor)


def test_every_version_policy_has_an_implementation_in_both_runtimes() -> None:
    """A policy name lint accepts is one both emitters and externspec.wire.version know."""
    from externspec.codegen import emit_cpp, ir
    from externspec.wire import version

    assert set(emit_cpp._POLICY_TEMPLATES) == set(ir.VERSION_POLICIES)
    for kind in ir.VERSION_POLICIES:
        namespace = {"VERSION_POLICY": kind, "__module__": es.ExternKernelNodes.__module__}
        model = type("Doc", (es.ExternKernelNodes,), namespace)
        assert version.policy_for(model) is not version.policy_for(es.TensorArgument)
