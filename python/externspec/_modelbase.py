"""Base classes and scalar types of the generated models (python/externspec/_generated).

The generated module is thin: it declares fields; the wire rules live here, once.

* Structs ignore unknown keys (torch's forward compatibility); unions forbid them, so an unknown
  member is an error, and a validator enforces exactly one non-null member.
* Everything is strict: no "42" for an int, no 1 for a bool. The one lenient spot is torch's float
  convention: JSON ints, and the strings "Infinity", "-Infinity" and "NaN", are floats.
* Integers are int64: out-of-range values are rejected, as the C++ side would.
* Models are frozen: a field cannot be reassigned (`arg.as_float = 1.0` on an `as_int` union, or
  `node.name = 123`), and `model_copy(update=...)` validates its result, so no model can hold
  what `es.loads` refuses (the containers inside, lists and dicts, stay plain Python ones).
* `Model.model_validate_json(text)` is `es.loads(text, Model)`: the version policy, the limits and
  the JSON-path errors (`es.DecodeError`, `es.VersionError`) apply however a document enters.
* Validators are built on first use (`defer_build`), so importing the models is cheap.
* A list or map stops at its first bad element (`ListOf`, `MapOf`): the problems a document reports
  are bounded by its shape, not its size (a million bad list elements once cost 700 MB of errors).
"""

from __future__ import annotations

import enum
import inspect
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Protocol, Self, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from .messages import message

I64_MIN = -(2**63)
I64_MAX = 2**63 - 1

_NON_FINITE = {"Infinity": math.inf, "-Infinity": -math.inf, "NaN": math.nan}


class _F64Marker:
    """A double on torch's wire: a JSON number, or one of the non-finite strings."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        non_finite = core_schema.no_info_after_validator_function(
            _NON_FINITE.__getitem__, core_schema.literal_schema(list(_NON_FINITE))
        )
        # JSON: a finite number or one of torch's strings (a bare NaN/Infinity literal is not
        # JSON, and the C++ decoder rejects it too). Python: any float, inf and nan included.
        json_schema = core_schema.union_schema(
            [core_schema.float_schema(strict=True, allow_inf_nan=False), non_finite],
            custom_error_type="f64_type",
            custom_error_message='expected `float` (a number, "Infinity", "-Infinity" or "NaN")',
        )
        return core_schema.json_or_python_schema(
            json_schema=json_schema,
            python_schema=core_schema.float_schema(strict=True, allow_inf_nan=True),
            serialization=core_schema.plain_serializer_function_ser_schema(_float_out, when_used="json"),
        )


class WireEnum(enum.IntEnum):
    """Base of generated enums: on the wire exactly a JSON integer that names a member.

    pydantic's own enum validation takes `true`, `5.0` or `1e0` for 5 even in strict mode; a
    strict int comes first here. From Python, members are required (not bare ints).
    """

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        members = list(cls)
        by_value = core_schema.enum_schema(cls, members, sub_type="int")
        return core_schema.json_or_python_schema(
            json_schema=core_schema.chain_schema([core_schema.int_schema(strict=True), by_value],
                                                 metadata={"pydantic_js_functions": [cls._json_schema]}),
            python_schema=core_schema.enum_schema(cls, members, sub_type="int", strict=True),
            serialization=core_schema.plain_serializer_function_ser_schema(int, when_used="json"),
        )


    @classmethod
    def _json_schema(cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """An integer that is one of the members' values, each named."""
        return {"title": cls.__name__, "description": inspect.cleandoc(cls.__doc__ or ""), "type": "integer",
                "oneOf": [{"const": m.value, "title": m.name} for m in cls]}


def _float_out(value: float) -> float | str:
    """The JSON form of a double: torch writes non-finite values as strings."""
    if math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


F64 = Annotated[float, _F64Marker]


class _FirstBadElement:
    """A list or dict validator that stops at its first bad element (pydantic's `fail_fast`).

    Without it pydantic-core keeps one error per bad element, ~430 bytes each before they are
    even turned into Python (1 MB of `0,` elements: 226 MB, then 460 MB more for `errors()`);
    with it a document's problems are bounded by its shape. The C++ decoder stops a container at
    its first bad element too, so both report the same problems."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        schema = dict(handler(source))  # a list_schema or dict_schema, both of which take fail_fast
        schema["fail_fast"] = True
        return cast(core_schema.CoreSchema, schema)


_T = TypeVar("_T")
_M = TypeVar("_M", bound=BaseModel)
_K = TypeVar("_K")
_V = TypeVar("_V")
ListOf = Annotated[list[_T], _FirstBadElement]
MapOf = Annotated[dict[_K, _V], _FirstBadElement]
I64 = Annotated[int, Field(ge=I64_MIN, le=I64_MAX)]
I32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]
I16 = Annotated[int, Field(ge=-(2**15), le=2**15 - 1)]
I8 = Annotated[int, Field(ge=-(2**7), le=2**7 - 1)]


# Thrift wire description of a generated class: (field id, field name, wire type) per field, in
# declaration order. A wire type is a base type name ("i64", "string", ...), a generated type's name,
# or ("list" | "set", elem) / ("map", key, value). Read by `externspec.thrift`.
ThriftFields = tuple[tuple[int, str, Any], ...]


def _omit(value: Any) -> bool:
    return value is None


# Used by generated union members and `json.omit_if_null` fields.
OMIT_IF_NONE: Any = _omit


class JsonLoads(Protocol):
    """The JSON decode of `externspec.wire.loads`, as the models' `model_validate_json` calls it."""

    def __call__(self, data: str | bytes | bytearray, type: type[_M], *, strict: bool) -> _M: ...


# The JSON decode decision (version policy, limits, `DecodeError`) is a layer above the models:
# `externspec.wire` installs it here when it is imported, which `externspec/__init__.py` does before
# any model can be used. The base never imports the layers built on it (tests/repo/test_layering.py).
_json_loads: JsonLoads | None = None


def install_json_loads(loads: JsonLoads) -> None:
    """Make `Model.model_validate_json(text)` mean `loads(text, Model)` (called by `externspec.wire`)."""
    global _json_loads
    _json_loads = loads


class _Model(BaseModel):
    """What every generated model shares: frozen, copies validated, JSON through `es.loads`."""

    FIELD_DOCS: ClassVar[dict[str, str]] = {}  # field name -> the IDL's doc (generated)

    model_config = ConfigDict(defer_build=True)  # never validated itself: no validator to build at import

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, *, strict: bool | None = None,
                            extra: Any = None, context: Any = None, by_alias: bool | None = None,
                            by_name: bool | None = None) -> Self:
        """Decode JSON as `es.loads(json_data, cls)` does (version policy, limits, `es.DecodeError`);
        `extra="forbid"` is `strict=True` there."""
        if _json_loads is None:
            raise RuntimeError("externspec.wire is not imported: import externspec first")
        return _json_loads(json_data, cls, strict=extra == "forbid")

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: core_schema.CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """The wire exactly: field docs from the IDL as descriptions; unions (see Union) tightened."""
        json_schema = handler(schema)
        target = handler.resolve_ref_schema(json_schema)
        properties = target.get("properties", {})
        for name, doc in cls.FIELD_DOCS.items():
            if name in properties:
                properties[name]["description"] = doc
        cls._wire_json_schema(target)
        return json_schema

    @classmethod
    def _wire_json_schema(cls, target: JsonSchemaValue) -> None:
        """Adjust the resolved schema of this model in place (unions override it)."""

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; with `update`, the result is validated like a new model (a union given a second
        member, or a field of the wrong type, raises pydantic's ValidationError)."""
        copied = super().model_copy(deep=deep)
        if not update:
            return copied
        given = {name: getattr(copied, name) for name in copied.model_fields_set}
        return type(self).model_validate({**given, **update})


class Struct(_Model):
    """Base of every generated struct."""

    THRIFT_FIELDS: ClassVar[ThriftFields] = ()

    model_config = ConfigDict(
        extra="ignore",
        strict=True,
        frozen=True,
        ser_json_inf_nan="strings",
        revalidate_instances="never",
        defer_build=True,
    )


# A union instance's fields set: one shared frozen set per member name (a set of its own per
# instance was ~200 bytes, a fifth of a decoded program's memory).
_MEMBER_SETS: dict[str, frozenset[str]] = {}


def _one_member_validator(union: str) -> Callable[[dict[str, Any]], tuple[dict[str, Any], None, frozenset[str]]]:
    """The after-validator of union `union`: the model's (attributes, extra, fields set) from the
    members given, which must be exactly one and not null. pydantic-core calls it once per union
    instance (some 100k in a 10k-node program), so the accepted case is kept to a few operations."""

    def one_member(members: dict[str, Any]) -> tuple[dict[str, Any], None, frozenset[str]]:
        if len(members) == 1:
            ((name, value),) = members.items()
            if value is not None:
                fields_set = _MEMBER_SETS.get(name)
                if fields_set is None:
                    fields_set = _MEMBER_SETS.setdefault(name, frozenset((name,)))
                return members, None, fields_set
            raise PydanticCustomError("union_null_member", message("UNION_MEMBER_NULL", member=name, union=union),
                                      {"member": name, "union": union})
        given = message("UNION_MEMBERS_GIVEN", members=", ".join(sorted(members))) if members else ""
        raise PydanticCustomError("union_members", message("UNION_ARITY", union=union, count=len(members)) + given,
                                  {"union": union, "count": len(members)})

    return one_member


class Union(_Model):
    """Base of every generated union: exactly one member is set, and it is not null.

    Serializes as a single-key object. `type` is the member's name and `value` its value.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, ser_json_inf_nan="strings",
                              defer_build=True)

    MEMBERS: ClassVar[tuple[str, ...]] = ()
    THRIFT_FIELDS: ClassVar[ThriftFields] = ()

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        """pydantic's model schema with its fields read as a non-total typed dict: an instance holds
        only the member that is set, where pydantic's fields would fill every other member with its
        None default (an Argument: 30 of them, most of a decoded union's memory and time); unset
        members read as None through `__getattr__`. `_one_member_validator` enforces the exactly-one
        rule."""
        schema = handler(source)
        model = cast(core_schema.ModelSchema, handler.resolve_ref_schema(schema))
        fields = model["schema"]
        if fields["type"] != "model-fields":
            return schema  # this class's schema, already converted (pydantic asks again for a recursive use)
        members = {
            name: core_schema.typed_dict_field(cast(core_schema.WithDefaultSchema, field["schema"])["schema"],
                                               required=False,
                                               serialization_exclude_if=field.get("serialization_exclude_if"))
            for name, field in fields["fields"].items()
        }
        typed_dict = core_schema.typed_dict_schema(members, extra_behavior="forbid", total=False,
                                                   config=model.get("config"))
        model["schema"] = core_schema.no_info_after_validator_function(_one_member_validator(cls.__name__), typed_dict)
        return schema

    @classmethod
    def model_construct(cls, _fields_set: set[str] | None = None, **values: Any) -> Self:
        """Without validation, as pydantic's, holding only the members given (as a validated
        instance does, so the two compare and hash equal)."""
        model = super().model_construct(_fields_set, **values)
        object.__setattr__(model, "__dict__", {k: v for k, v in model.__dict__.items() if k in values})
        return model

    if not TYPE_CHECKING:  # for a type checker, every member is a declared `X | None` attribute
        def __getattr__(self, name: str) -> Any:
            if name in type(self).__pydantic_fields__:
                return None  # a member that is not set
            return super().__getattr__(name)

    @classmethod
    def _wire_json_schema(cls, target: JsonSchemaValue) -> None:
        """Exactly one key, a known member, whose value is not null."""
        for member in target.get("properties", {}).values():
            member.pop("default", None)
            choices = member.pop("anyOf", None)
            if choices is not None:
                non_null = [c for c in choices if c != {"type": "null"}]
                member.update(non_null[0] if len(non_null) == 1 else {"anyOf": non_null})
        target.update(minProperties=1, maxProperties=1, additionalProperties=False)

    @property
    def type(self) -> str:
        """The name of the member that is set."""
        return next(iter(self.model_fields_set))

    @property
    def value(self) -> Any:
        """The value of the member that is set."""
        return getattr(self, self.type)

    def unwrap(self, member: str) -> Any:
        """The value of `member`, which must be the member that is set, else `UnionAccessError`
        (as the C++ accessors throw). The typed accessor: for a type checker `arg.unwrap("as_int")`
        is an `int`, where `arg.as_int` stays `int | None` whatever `arg.type` was compared to."""
        from .errors import UnionAccessError

        if member not in self.MEMBERS:
            raise UnionAccessError(f"`{type(self).__name__}` has no member `{member}`")
        if member != self.type:
            raise UnionAccessError(f"{type(self).__name__} holds `{self.type}`, not `{member}`")
        return getattr(self, member)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.type}={self.value!r})"

    def __str__(self) -> str:
        return f"{self.type}={self.value!r}"
