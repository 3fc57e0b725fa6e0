"""The schema IR: the one structure every emitter and the compatibility checker consume.

Only `parse` knows Thrift syntax; it converts thriftpy2's output to these frozen dataclasses at
once. Everything here is plain data: emitters are pure functions of a `Schema`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Union

Requiredness = Literal["required", "optional", "default"]
ConstValue = Union[None, bool, int, float, str, tuple, "ConstMap"]


@dataclass(frozen=True)
class SourceLoc:
    """A position in an IDL file, printed as `file:line:col` (1-based)."""

    file: str
    line: int
    col: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class ConstMap:
    """A map or struct literal, as ordered (key, value) pairs (dicts are not hashable)."""

    items: tuple[tuple[ConstValue, ConstValue], ...]


@dataclass(frozen=True)
class TypeRef:
    """A field type. `kind` is `base`, `list`, `set`, `map` or `named` (an enum, struct or union).

    Typedefs are resolved by the parser: two fields of the same structure compare equal.
    """

    kind: Literal["base", "list", "set", "map", "named"]
    name: str = ""  # base type name or named type name
    args: tuple[TypeRef, ...] = ()  # element type, or (key, value) for maps

    def __str__(self) -> str:
        if self.kind in ("base", "named"):
            return self.name
        return f"{self.kind}<{', '.join(str(a) for a in self.args)}>"

    @staticmethod
    def base(name: str) -> TypeRef:
        return TypeRef("base", name)

    @staticmethod
    def named(name: str) -> TypeRef:
        return TypeRef("named", name)

    @staticmethod
    def list_of(elem: TypeRef) -> TypeRef:
        return TypeRef("list", "", (elem,))

    @staticmethod
    def map_of(key: TypeRef, value: TypeRef) -> TypeRef:
        return TypeRef("map", "", (key, value))

    def named_types(self) -> tuple[str, ...]:
        """Every named type this reference mentions, outermost first."""
        if self.kind == "named":
            return (self.name,)
        return tuple(n for a in self.args for n in a.named_types())


# The annotations that carry meaning, and the values they take (codegen.lint checks them).
OMIT_IF_NULL = "json.omit_if_null"
VERSION_POLICY = "version_policy"
MEMBERS_OF = "members_of"
# A document type's version policy (docs/versioning.md): "externspec" is externspec's own
# `optional SchemaVersion schema_version` (absent: torch-written, read as 1.0; unknown keys refused
# unless absent); "torch_export" is torch's export schema version, checked against the const
# TORCH_EXPORT_SCHEMA_MAJOR (0.0: unversioned).
VERSION_POLICIES = ("externspec", "torch_export")


@dataclass(frozen=True)
class Field:
    """A struct field or union member."""

    id: int
    name: str
    type: TypeRef
    requiredness: Requiredness
    default: ConstValue
    has_default: bool
    doc: str
    loc: SourceLoc
    annotations: tuple[tuple[str, str], ...] = ()

    @property
    def is_optional(self) -> bool:
        return self.requiredness == "optional"

    @property
    def omit_if_null(self) -> bool:
        """`(json.omit_if_null = "true")`: an unset optional is left out of the JSON, not written null."""
        return self.annotation(OMIT_IF_NULL) is not None

    def annotation(self, key: str) -> str | None:
        return dict(self.annotations).get(key)


@dataclass(frozen=True)
class EnumValue:
    name: str
    value: int
    doc: str
    loc: SourceLoc


@dataclass(frozen=True)
class Enum:
    name: str
    values: tuple[EnumValue, ...]
    doc: str
    loc: SourceLoc
    annotations: tuple[tuple[str, str], ...] = ()

    kind: Literal["enum"] = "enum"


@dataclass(frozen=True)
class Struct:
    """A struct or a union (`kind`). Fields are in declaration order."""

    name: str
    kind: Literal["struct", "union"]
    fields: tuple[Field, ...]
    doc: str
    loc: SourceLoc
    annotations: tuple[tuple[str, str], ...] = ()

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)

    @property
    def version_policy(self) -> str | None:
        """`(version_policy = "...")`: how a document of this type is version-checked on load
        (one of VERSION_POLICIES), None for an unversioned type."""
        return self.annotation(VERSION_POLICY)

    def annotation(self, key: str) -> str | None:
        return dict(self.annotations).get(key)


TypeDef = Enum | Struct


@dataclass(frozen=True)
class Const:
    name: str
    type: TypeRef
    value: ConstValue
    doc: str
    loc: SourceLoc
    annotations: tuple[tuple[str, str], ...] = ()

    @property
    def members_of(self) -> str | None:
        """`(members_of = "U")`: every string this const's value holds (list elements, map values)
        names a member of union U; codegen.lint checks it, so a table cannot name a member the
        union lost."""
        return dict(self.annotations).get(MEMBERS_OF)

    def strings(self) -> tuple[str, ...]:
        """The string leaves of the value: list elements and map values (not map keys)."""
        def leaves(v: ConstValue) -> tuple[str, ...]:
            if isinstance(v, str):
                return (v,)
            if isinstance(v, tuple):
                return tuple(s for item in v for s in leaves(item))
            if isinstance(v, ConstMap):
                return tuple(s for _, item in v.items for s in leaves(item))
            return ()
        return leaves(self.value)


@dataclass(frozen=True)
class Schema:
    """A whole IDL file. `types` and `consts` are in declaration order."""

    path: str
    checksum: str  # sha256 of the IDL text
    namespaces: tuple[tuple[str, str], ...]
    types: tuple[TypeDef, ...]
    consts: tuple[Const, ...]
    doc: str = ""
    _by_name: dict[str, TypeDef] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_name.update((t.name, t) for t in self.types)

    def type(self, name: str) -> TypeDef:
        return self._by_name[name]

    def get(self, name: str) -> TypeDef | None:
        return self._by_name.get(name)

    def const(self, name: str) -> Const | None:
        return next((c for c in self.consts if c.name == name), None)

    @property
    def enums(self) -> tuple[Enum, ...]:
        return tuple(t for t in self.types if isinstance(t, Enum))

    @property
    def structs(self) -> tuple[Struct, ...]:
        return tuple(t for t in self.types if isinstance(t, Struct))

    def schema_version(self) -> tuple[int, int] | None:
        """The `SCHEMA_VERSION` const as (major, minor), if the schema declares one."""
        c = self.const("SCHEMA_VERSION")
        if c is None or not isinstance(c.value, ConstMap):
            return None
        d = dict(c.value.items)
        major, minor = d.get("major"), d.get("minor")
        if isinstance(major, int) and isinstance(minor, int):
            return (major, minor)
        return None
