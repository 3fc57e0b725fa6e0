"""What the Thrift binary and compact codecs share: the wire types of the generated classes, the
reader/writer framework (`Codec`), and decode errors with paths. See `externspec.thrift`."""

from __future__ import annotations

import enum
import json
import struct
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Literal

from .._modelbase import Union as UnionModel
from ..errors import UnsupportedError
from ..messages import message
from ..wire.limits import MAX_JSON_DEPTH

Protocol = Literal["binary", "compact"]
PROTOCOLS: tuple[Protocol, ...] = ("binary", "compact")

# Decoded structs carry unknown field ids under this key prefix; pydantic then treats them exactly
# like unknown JSON keys (ignored, or "unknown key" under extra="forbid").
UNKNOWN_KEY = "field id "

TRUNCATED = (IndexError, struct.error)


class Fail(Exception):
    """A decode problem of one ERROR_KINDS kind; the path is collected while the stack unwinds
    (innermost part first)."""

    def __init__(self, kind: str, message: str, offset: int):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.offset = offset
        self.parts: list[str] = []

    def path(self) -> str:
        return "$" + "".join(reversed(self.parts))


def truncated(offset: int, size: int) -> Fail:
    return Fail("truncated", f"input truncated: the value runs past the end of the input ({size} bytes)", offset)


# --- the schema side: wire types of the generated classes ------------------------------------------

_BASE = ("bool", "byte", "i16", "i32", "i64", "double", "string")
Spec = Any  # a THRIFT_FIELDS wire type: base name, generated type name, or ("list"|"set"|"map", ...)


def _resolve(owner: type, name: str) -> type:
    """A generated type by name, from the module that defines `owner`."""
    found = getattr(sys.modules[owner.__module__], name, None)
    if not isinstance(found, type):
        raise UnsupportedError(f"{owner.__name__}: wire type `{name}` is not a generated type")
    return found


def _kind(owner: type, spec: Spec) -> tuple[str, Any]:
    """Classify a wire type: ("base", name) | ("enum", cls) | ("struct", cls) | (container, args)."""
    if isinstance(spec, tuple):
        return spec[0], spec[1:]
    if spec in _BASE:
        return "base", spec
    if spec == "binary":
        raise UnsupportedError(f"{owner.__name__}: `binary` fields are not supported by the models")
    cls = _resolve(owner, spec)
    if issubclass(cls, enum.IntEnum):
        return "enum", cls
    return "struct", cls


# --- protocol tables ---------------------------------------------------------------------------------

# Binary protocol type ids (TType) and compact protocol type ids.
TTYPE = {"bool": 2, "byte": 3, "double": 4, "i16": 6, "i32": 8, "enum": 8, "i64": 10, "string": 11,
          "struct": 12, "map": 13, "set": 14, "list": 15}
CTYPE = {"bool": 1, "byte": 3, "i16": 4, "i32": 5, "enum": 5, "i64": 6, "double": 7, "string": 8,
          "list": 9, "set": 10, "map": 11, "struct": 12}
TTYPE_NAMES = {2: "bool", 3: "byte", 4: "double", 6: "i16", 8: "i32", 10: "i64", 11: "string",
                12: "struct", 13: "map", 14: "set", 15: "list"}
CTYPE_NAMES = {1: "bool", 2: "bool", 3: "byte", 4: "i16", 5: "i32", 6: "i64", 7: "double", 8: "string",
                9: "list", 10: "set", 11: "map", 12: "struct"}


def wire_name(kind: str, spec: Any) -> str:
    return "i32" if kind == "enum" else (spec if kind == "base" else kind)


_BE_I16, BE_I32, _BE_I64, _BE_F64 = (struct.Struct(f) for f in (">h", ">i", ">q", ">d"))
LE_F64 = struct.Struct("<d")
BE_LIST_HEADER = struct.Struct(">bi")
BE_MAP_HEADER = struct.Struct(">bbi")
BE_FIELD_HEADER = struct.Struct(">bh")
BE_FIXED = {"i16": ("h", 2), "i32": ("i", 4), "i64": ("q", 8), "double": ("d", 8), "byte": ("b", 1)}
_RANGES = {"byte": 8, "i16": 16, "i32": 32, "i64": 64}

Reader = Callable[[bytes, int, int], tuple[Any, int]]
Writer = Callable[[bytearray, Any], None]


class Codec(ABC):
    """Readers and writers of one protocol, built once per generated class and cached.

    A reader is `read(buf, pos, depth) -> (value, new_pos)` producing plain Python values (dicts for
    structs, with enum members and bools typed as pydantic's strict mode wants them); the top level
    validates the whole tree in one pydantic-core call. A writer is `write(out, value)` over models.
    """

    name: Protocol
    # The fewest bytes a field header and a value of each wire kind take (a lower bound on what a
    # valid element can take: see `min_bytes`).
    FIELD_HEADER_BYTES: int
    MIN_VALUE_BYTES: dict[str, int]

    def __init__(self) -> None:
        self._struct_readers: dict[type, Reader] = {}
        self._struct_writers: dict[type, Writer] = {}
        self._min_struct_bytes: dict[type, int] = {}

    def min_bytes(self, kind: str, spec: Any, visiting: frozenset[type] = frozenset()) -> int:
        """The fewest bytes any valid value of this wire type takes. A list header's count times
        this must fit in the bytes that remain: a 1 MB list of empty structs (one stop byte each)
        would otherwise become a million dicts before validation says each lacks its required
        fields (2000x the input)."""
        if kind != "struct":
            return self.MIN_VALUE_BYTES["enum" if kind == "enum" else (spec if kind == "base" else kind)]
        found = self._min_struct_bytes.get(spec)
        if found is not None:
            return found
        if spec in visiting:  # a recursive type: its stop byte is a safe lower bound
            return 1
        inner = visiting | {spec}
        sizes = [self.FIELD_HEADER_BYTES + self.min_bytes(*_kind(spec, fspec), inner)
                 for _, name, fspec in spec.THRIFT_FIELDS
                 if issubclass(spec, UnionModel) or spec.model_fields[name].is_required()]
        # A union holds exactly one member (the smallest bounds it); a struct all its required fields.
        total = 1 + (min(sizes, default=0) if issubclass(spec, UnionModel) else sum(sizes))
        if not visiting:
            self._min_struct_bytes[spec] = total
        return total

    # Subclasses provide the primitives.
    @abstractmethod
    def type_id(self, kind: str, spec: Any) -> int: ...
    @abstractmethod
    def base_reader(self, name: str) -> Reader: ...
    @abstractmethod
    def base_writer(self, name: str) -> Writer: ...
    @abstractmethod
    def list_reader(self, kind: str, elem: Reader, elem_id: int, elem_spec: tuple[str, Any]) -> Reader: ...
    @abstractmethod
    def list_writer(self, kind: str, elem: Writer, elem_id: int, elem_spec: tuple[str, Any]) -> Writer: ...
    @abstractmethod
    def map_reader(self, key: Reader, key_id: int, value: Reader, value_id: int) -> Reader: ...
    @abstractmethod
    def map_writer(self, key: Writer, key_id: int, value: Writer, value_id: int) -> Writer: ...
    @abstractmethod
    def build_struct_reader(self, cls: type, fields: dict[int, Any], union: bool) -> Reader: ...
    @abstractmethod
    def build_struct_writer(self, cls: type, plan: list[tuple[int, str, Any, Writer]]) -> Writer: ...
    @abstractmethod
    def skip(self, buf: bytes, pos: int, type_id: int, depth: int) -> int: ...

    def reader(self, owner: type, spec: Spec) -> Reader:
        kind, arg = _kind(owner, spec)
        if kind == "base":
            return self.base_reader(arg)
        if kind == "enum":
            return self._enum_reader(arg)
        if kind == "struct":
            return self.struct_reader(arg)
        if kind in ("list", "set"):
            elem_kind = _kind(owner, arg[0])
            return self.list_reader(kind, self.reader(owner, arg[0]), self.type_id(*elem_kind), elem_kind)
        return self.map_reader(self.reader(owner, arg[0]), self.type_id(*_kind(owner, arg[0])),
                               self.reader(owner, arg[1]), self.type_id(*_kind(owner, arg[1])))

    def writer(self, owner: type, spec: Spec) -> Writer:
        kind, arg = _kind(owner, spec)
        if kind == "base":
            return self.base_writer(arg)
        if kind == "enum":
            return self.base_writer("i32")
        if kind == "struct":
            return self.struct_writer(arg)
        if kind in ("list", "set"):
            elem_kind = _kind(owner, arg[0])
            return self.list_writer(kind, self.writer(owner, arg[0]), self.type_id(*elem_kind), elem_kind)
        return self.map_writer(self.writer(owner, arg[0]), self.type_id(*_kind(owner, arg[0])),
                               self.writer(owner, arg[1]), self.type_id(*_kind(owner, arg[1])))

    def _enum_reader(self, cls: type[enum.IntEnum]) -> Reader:
        read_i32 = self.base_reader("i32")
        members = dict(cls._value2member_map_)

        def read_enum(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
            value, pos = read_i32(buf, pos, depth)
            member = members.get(value)
            if member is None:
                raise Fail("enum", f"invalid enum value {value} for `{cls.__name__}`", pos - 1)
            return member, pos

        return read_enum

    def struct_reader(self, cls: type) -> Reader:
        """The reader of a generated struct or union; recursive types reuse the cached closure."""
        found = self._struct_readers.get(cls)
        if found is not None:
            return found
        fields: dict[int, Any] = {}
        reader = self.build_struct_reader(cls, fields, issubclass(cls, UnionModel))
        self._struct_readers[cls] = reader  # before the fields: they may refer back to cls
        for fid, name, spec in cls.THRIFT_FIELDS:  # type: ignore[attr-defined]
            kind = _kind(cls, spec)
            fields[fid] = (name, self.type_id(*kind), self.reader(cls, spec), wire_name(*kind))
        return reader

    def struct_writer(self, cls: type) -> Writer:
        found = self._struct_writers.get(cls)
        if found is not None:
            return found
        plan: list[tuple[int, str, Any, Writer]] = []
        writer = self.build_struct_writer(cls, plan)
        self._struct_writers[cls] = writer
        for fid, name, spec in cls.THRIFT_FIELDS:  # type: ignore[attr-defined]
            plan.append((fid, name, self.type_id(*_kind(cls, spec)), self.writer(cls, spec)))
        return writer


def union_check(cls: type, out: dict[str, Any], pos: int) -> None:
    known = [k for k in out if not k.startswith(UNKNOWN_KEY)]
    if len(known) == 1:
        return
    if known:
        raise Fail("union", message("UNION_ARITY", union=cls.__name__, count=len(known))
                   + message("UNION_MEMBERS_GIVEN", members=", ".join(known)), pos)
    unknown = [k.removeprefix(UNKNOWN_KEY) for k in out]
    extra = f" (only unknown field ids {', '.join(unknown)})" if unknown else ""
    raise Fail("union", message("UNION_ARITY", union=cls.__name__, count=0) + extra, pos)


def int_range(name: str) -> Callable[[int], None]:
    bits = _RANGES[name]
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def check(v: int) -> None:
        if not lo <= v <= hi:
            raise Fail("int_range", f"integer {v} out of range for `{name}`", -1)

    return check


def check_depth(depth: int, pos: int) -> None:
    if depth > MAX_JSON_DEPTH:
        raise Fail("limit", message("NESTING_TOO_DEEP", depth=MAX_JSON_DEPTH), pos)


def read_string_at(buf: bytes, pos: int, n: int) -> tuple[str, int]:
    if n < 0:
        raise Fail("syntax", f"negative string length {n}", pos)
    end = pos + n
    if end > len(buf):
        raise truncated(pos, len(buf))
    try:
        return buf[pos:end].decode("utf-8"), end
    except UnicodeDecodeError as e:
        raise Fail("encoding", f"invalid UTF-8 in string: {e.reason}", pos + e.start) from None


def check_count(n: int, pos: int, buf: bytes, what: str, min_bytes: int = 1) -> None:
    """Every element takes at least `min_bytes` (one, or what its type's required fields take): a
    count beyond the input is corrupt, not a big list."""
    if n < 0:
        raise Fail("syntax", f"negative {what} size {n}", pos)
    if n * min_bytes > len(buf) - pos:
        each = f" of at least {min_bytes} bytes each" if min_bytes > 1 else ""
        raise Fail("truncated", f"{what} declares {n} elements{each} but only {len(buf) - pos} bytes remain", pos)


def field_loop_errors(e: BaseException, name_part: str, start: int, size: int) -> Fail:
    fail = e if isinstance(e, Fail) else truncated(start, size)
    fail.parts.append(name_part)
    return fail


def quote(k: Any) -> str:
    """A map key as a path part, written as the JSON decoder writes it (a JSON string: quotes,
    backslashes and control characters escaped, so `errors()` can read the path back)."""
    return json.dumps(k) if isinstance(k, str) and k != "(key)" else str(k)
