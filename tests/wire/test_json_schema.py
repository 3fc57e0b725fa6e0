"""`model_json_schema()` describes the wire: every valid conformance document validates against its
type's schema and every invalid one is refused, except the declared differences below (rules that a
JSON Schema cannot state). Checked with the `jsonschema` package (Draft 2020-12)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

import externspec as es
from tests.support.paths import CONFORMANCE

MANIFEST = json.loads((CONFORMANCE / "manifest.json").read_text())

# Invalid documents a JSON Schema accepts, and why no schema can refuse them. Unknown names fail.
NOT_EXPRESSIBLE = {
    "nesting_too_deep.json": "a nesting limit is the decoder's, not the document's type",
    "syntax_bom_before_document.json": "a byte order mark is below JSON Schema (Python's json.loads skips it)",
    "int_as_float.json": "JSON Schema counts 2.0 as an integer; the wire refuses a written fraction",
    "lone_surrogate.json": "JSON Schema sees decoded strings; the wire refuses unpaired surrogates",
    "versioned_unknown_key_same_minor.json": "the version policy decides unknown keys by the document's version",
    "versioned_newer_minor_unknown_key.json": "the version policy decides unknown keys by the document's version",
    "versioned_major_mismatch.json": "which majors a reader accepts is the version policy",
    "versioned_major_mismatch_with_unknown.json": "which majors a reader accepts is the version policy",
    "exported_program_wrong_major.json": "which majors a reader accepts is the version policy",
}
# Invalid documents that are not JSON at all (the schema applies to parsed documents).
NOT_JSON = {"syntax_trailing.json", "syntax_truncated.json", "invalid_utf8.json", "empty.json",
            "syntax_nul_then_more.json"}


def validator(type_name: str) -> jsonschema.Draft202012Validator:
    schema = getattr(es, type_name).model_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("name", sorted(MANIFEST["valid"]))
def test_valid_documents_match_the_schema(name: str) -> None:
    doc = json.loads((CONFORMANCE / "valid" / name).read_bytes())
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator(MANIFEST["valid"][name]).iter_errors(doc)]
    assert errors == []


@pytest.mark.parametrize("name", sorted(set(MANIFEST["invalid"]) - NOT_JSON))
def test_invalid_documents_are_refused_by_the_schema(name: str) -> None:
    doc = json.loads((CONFORMANCE / "invalid" / name).read_bytes())
    accepted = validator(MANIFEST["invalid"][name]["type"]).is_valid(doc)
    assert accepted == (name in NOT_EXPRESSIBLE), NOT_EXPRESSIBLE.get(name, "the schema accepts it")


def test_the_declared_differences_name_real_documents() -> None:
    assert set(NOT_EXPRESSIBLE) | NOT_JSON <= set(MANIFEST["invalid"])
    for name in NOT_JSON:
        with pytest.raises(ValueError):
            json.loads((CONFORMANCE / "invalid" / name).read_bytes())


def _resolved(schema: dict[str, Any], name: str) -> dict[str, Any]:
    return schema["$defs"][name] if "$defs" in schema and name in schema["$defs"] else schema


def test_unions_take_exactly_one_non_null_member() -> None:
    v = validator("Argument")
    assert v.is_valid({"as_int": 3})
    for bad in ({}, {"as_int": 3, "as_float": 1.0}, {"as_nope": 1}, {"as_int": None}):
        assert not v.is_valid(bad), bad


def test_enums_carry_names_and_values() -> None:
    schema = es.TensorMeta.model_json_schema()["properties"]["dtype"]
    assert schema["type"] == "integer"
    assert {"const": es.ScalarType.LONG.value, "title": "LONG"} in schema["oneOf"]
    assert len(schema["oneOf"]) == len(es.ScalarType)
    assert not validator("TensorMeta").is_valid({"dtype": 14, "sizes": [], "requires_grad": False,
                                                  "device": {"type": "cpu"}, "strides": [],
                                                  "storage_offset": {"as_int": 0}, "layout": 0})


def test_field_docs_come_from_the_idl() -> None:
    props = _resolved(es.Device.model_json_schema(), "Device")["properties"]
    assert props["index"]["description"] == "Device index; null means the current device of that type."
    assert es.Device.FIELD_DOCS["type"] == props["type"]["description"]
