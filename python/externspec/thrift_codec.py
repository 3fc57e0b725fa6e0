"""Thrift binary and compact protocols for the generated models, by field id.

Any Thrift implementation that loads schema/externspec.thrift reads what `dumps` writes, and
`loads` reads what they write (tests check both ways against thriftpy2). JSON stays the default and
torch-compatible format; these are the compact, fast-to-skip alternatives for other Thrift tools.

Why a codec of our own instead of thriftpy2: thriftpy2 is a codegen-time dependency and the runtime
must not need it; it enforces neither union nor required rules; and its objects are not our models.
The codec works from the `THRIFT_FIELDS` tables the emitter puts on each generated class, so the
runtime never imports codegen.

Rules on read, beyond the protocols themselves:
* unions: exactly one member, or a `DecodeError` naming the union and its path;
* unknown field ids are skipped (Thrift's rule) but remembered: under `strict=True`, and in a
  versioned document (`ExternKernelNodes`) that does not declare a newer minor, they are an error,
  exactly as unknown JSON keys are (see `externspec.version`);
* a known field id with another wire type, an invalid enum value or UTF-8 string, trailing bytes,
  truncated input, and nesting deeper than `MAX_JSON_DEPTH` are `DecodeError`s with a path
  (`$.nodes[3].node.target`) and the byte offset; never an IndexError or a RecursionError.
Enums travel as i32, doubles as IEEE 754 (binary big-endian, compact little-endian).
"""

from __future__ import annotations

import enum
import math
import struct
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from . import version, wire
from ._modelbase import Union as UnionModel
from .errors import DecodeError, UnsupportedError
from .wire import MAX_JSON_DEPTH, decode_errors, gc_paused

M = TypeVar("M", bound=BaseModel)
Protocol = Literal["binary", "compact"]
PROTOCOLS: tuple[Protocol, ...] = ("binary", "compact")

# Decoded structs carry unknown field ids under this key prefix; pydantic then treats them exactly
# like unknown JSON keys (ignored, or "unknown key" under extra="forbid").
UNKNOWN_KEY = "field id "

_TRUNCATED = (IndexError, struct.error)


class _Fail(Exception):
    """A decode problem; the path is collected while the stack unwinds (innermost part first)."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.parts: list[str] = []

    def path(self) -> str:
        return "$" + "".join(reversed(self.parts))


def _truncated(offset: int, size: int) -> _Fail:
    return _Fail(f"input truncated: the value runs past the end of the input ({size} bytes)", offset)


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
_TTYPE = {"bool": 2, "byte": 3, "double": 4, "i16": 6, "i32": 8, "enum": 8, "i64": 10, "string": 11,
          "struct": 12, "map": 13, "set": 14, "list": 15}
_CTYPE = {"bool": 1, "byte": 3, "i16": 4, "i32": 5, "enum": 5, "i64": 6, "double": 7, "string": 8,
          "list": 9, "set": 10, "map": 11, "struct": 12}
_TTYPE_NAMES = {2: "bool", 3: "byte", 4: "double", 6: "i16", 8: "i32", 10: "i64", 11: "string",
                12: "struct", 13: "map", 14: "set", 15: "list"}
_CTYPE_NAMES = {1: "bool", 2: "bool", 3: "byte", 4: "i16", 5: "i32", 6: "i64", 7: "double", 8: "string",
                9: "list", 10: "set", 11: "map", 12: "struct"}


def _wire_name(kind: str, spec: Any) -> str:
    return "i32" if kind == "enum" else (spec if kind == "base" else kind)


_BE_I16, _BE_I32, _BE_I64, _BE_F64 = (struct.Struct(f) for f in (">h", ">i", ">q", ">d"))
_LE_F64 = struct.Struct("<d")
_BE_LIST_HEADER = struct.Struct(">bi")
_BE_MAP_HEADER = struct.Struct(">bbi")
_BE_FIELD_HEADER = struct.Struct(">bh")
_BE_FIXED = {"i16": ("h", 2), "i32": ("i", 4), "i64": ("q", 8), "double": ("d", 8), "byte": ("b", 1)}
_RANGES = {"byte": 8, "i16": 16, "i32": 32, "i64": 64}

Reader = Callable[[bytes, int, int], tuple[Any, int]]
Writer = Callable[[bytearray, Any], None]


class _Codec(ABC):
    """Readers and writers of one protocol, built once per generated class and cached.

    A reader is `read(buf, pos, depth) -> (value, new_pos)` producing plain Python values (dicts for
    structs, with enum members and bools typed as pydantic's strict mode wants them); the top level
    validates the whole tree in one pydantic-core call. A writer is `write(out, value)` over models.
    """

    name: Protocol

    def __init__(self) -> None:
        self._struct_readers: dict[type, Reader] = {}
        self._struct_writers: dict[type, Writer] = {}

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
                raise _Fail(f"invalid enum value {value} for `{cls.__name__}`", pos - 1)
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
            fields[fid] = (name, self.type_id(*kind), self.reader(cls, spec), _wire_name(*kind))
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


def _union_check(cls: type, out: dict[str, Any], pos: int) -> None:
    known = [k for k in out if not k.startswith(UNKNOWN_KEY)]
    if len(known) == 1:
        return
    if known:
        raise _Fail(f"expected exactly one member of `{cls.__name__}`, got {len(known)} ({', '.join(known)})", pos)
    unknown = [k.removeprefix(UNKNOWN_KEY) for k in out]
    extra = f" (only unknown field ids {', '.join(unknown)})" if unknown else ""
    raise _Fail(f"expected exactly one member of `{cls.__name__}`, got 0{extra}", pos)


def _int_range(name: str) -> Callable[[int], None]:
    bits = _RANGES[name]
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def check(v: int) -> None:
        if not lo <= v <= hi:
            raise _Fail(f"integer {v} out of range for `{name}`", -1)

    return check


def _check_depth(depth: int, pos: int) -> None:
    if depth > MAX_JSON_DEPTH:
        raise _Fail(f"nesting deeper than {MAX_JSON_DEPTH} levels", pos)


def _read_string_at(buf: bytes, pos: int, n: int) -> tuple[str, int]:
    if n < 0:
        raise _Fail(f"negative string length {n}", pos)
    end = pos + n
    if end > len(buf):
        raise _truncated(pos, len(buf))
    try:
        return buf[pos:end].decode("utf-8"), end
    except UnicodeDecodeError as e:
        raise _Fail(f"invalid UTF-8 in string: {e.reason}", pos + e.start) from None


def _check_count(n: int, pos: int, buf: bytes, what: str) -> None:
    """Every element takes at least one byte: a count beyond the input is corrupt, not a big list."""
    if n < 0:
        raise _Fail(f"negative {what} size {n}", pos)
    if n > len(buf) - pos:
        raise _Fail(f"{what} declares {n} elements but only {len(buf) - pos} bytes remain", pos)


def _field_loop_errors(e: BaseException, name_part: str, start: int, size: int) -> _Fail:
    fail = e if isinstance(e, _Fail) else _truncated(start, size)
    fail.parts.append(name_part)
    return fail


# --- binary protocol -------------------------------------------------------------------------------


class _Binary(_Codec):
    name: Protocol = "binary"

    def type_id(self, kind: str, spec: Any) -> int:
        return _TTYPE[_wire_name(kind, spec) if kind in ("base", "enum") else kind]

    def base_reader(self, name: str) -> Reader:
        if name == "bool":
            def read_bool(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
                b = buf[pos]
                if b > 1:
                    raise _Fail(f"invalid bool byte {b}", pos)
                return b == 1, pos + 1
            return read_bool
        if name == "string":
            unpack_i32 = _BE_I32.unpack_from

            def read_string(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
                return _read_string_at(buf, pos + 4, unpack_i32(buf, pos)[0])
            return read_string
        code, size = _BE_FIXED[name]
        unpack = struct.Struct(">" + code).unpack_from

        def read_fixed(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
            return unpack(buf, pos)[0], pos + size
        return read_fixed

    def base_writer(self, name: str) -> Writer:
        if name == "bool":
            def write_bool(out: bytearray, v: Any) -> None:
                out.append(1 if v else 0)
            return write_bool
        if name == "string":
            pack_i32 = _BE_I32.pack

            def write_string(out: bytearray, v: Any) -> None:
                data = v.encode("utf-8")
                out += pack_i32(len(data))
                out += data
            return write_string
        pack = struct.Struct(">" + _BE_FIXED[name][0]).pack

        def write_fixed(out: bytearray, v: Any) -> None:
            out += pack(v)
        return write_fixed

    def list_reader(self, kind: str, elem: Reader, elem_id: int, elem_spec: tuple[str, Any]) -> Reader:
        unpack_header = _BE_LIST_HEADER.unpack_from
        fixed = _BE_FIXED.get(elem_spec[1]) if elem_spec[0] == "base" else None

        def read_list(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
            _check_depth(depth, pos)
            etype, n = unpack_header(buf, pos)
            if etype != elem_id:
                raise _Fail(f"{kind} of {_TTYPE_NAMES.get(etype, etype)}, expected {kind} of "
                            f"{_TTYPE_NAMES[elem_id]}", pos)
            pos += 5
            _check_count(n, pos, buf, kind)
            if fixed is not None:  # one C call for a run of numbers
                end = pos + n * fixed[1]
                if end > len(buf):
                    raise _truncated(pos, len(buf))
                return list(struct.unpack_from(f">{n}{fixed[0]}", buf, pos)), end
            out = []
            i = 0
            try:
                for i in range(n):  # noqa: B007 (i names the failing element)
                    v, pos = elem(buf, pos, depth + 1)
                    out.append(v)
            except (_Fail, *_TRUNCATED) as e:
                raise _field_loop_errors(e, f"[{i}]", pos, len(buf)) from None
            return out, pos
        return read_list

    def list_writer(self, kind: str, elem: Writer, elem_id: int, elem_spec: tuple[str, Any]) -> Writer:
        pack_header = _BE_LIST_HEADER.pack
        fixed = _BE_FIXED.get(elem_spec[1]) if elem_spec[0] == "base" else None

        def write_list(out: bytearray, v: Any) -> None:
            out += pack_header(elem_id, len(v))
            if fixed is not None:
                out += struct.pack(f">{len(v)}{fixed[0]}", *v)
                return
            for item in v:
                elem(out, item)
        return write_list

    def map_reader(self, key: Reader, key_id: int, value: Reader, value_id: int) -> Reader:
        unpack_header = _BE_MAP_HEADER.unpack_from

        def read_map(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
            _check_depth(depth, pos)
            ktype, vtype, n = unpack_header(buf, pos)
            if n and (ktype, vtype) != (key_id, value_id):
                raise _Fail(f"map<{_TTYPE_NAMES.get(ktype, ktype)}, {_TTYPE_NAMES.get(vtype, vtype)}>, expected "
                            f"map<{_TTYPE_NAMES[key_id]}, {_TTYPE_NAMES[value_id]}>", pos)
            pos += 6
            _check_count(n, pos, buf, "map")
            out = {}
            k: Any = "(key)"
            try:
                for _ in range(n):
                    k = "(key)"
                    k, pos = key(buf, pos, depth + 1)
                    out[k], pos = value(buf, pos, depth + 1)
            except (_Fail, *_TRUNCATED) as e:
                raise _field_loop_errors(e, f"[{_quote(k)}]", pos, len(buf)) from None
            return out, pos
        return read_map

    def map_writer(self, key: Writer, key_id: int, value: Writer, value_id: int) -> Writer:
        pack_header = _BE_MAP_HEADER.pack

        def write_map(out: bytearray, v: Any) -> None:
            out += pack_header(key_id, value_id, len(v))
            for k, item in v.items():
                key(out, k)
                value(out, item)
        return write_map

    def build_struct_reader(self, cls: type, fields: dict[int, Any], union: bool) -> Reader:
        unpack_header = _BE_FIELD_HEADER.unpack_from
        skip = self.skip

        def read_struct(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
            _check_depth(depth, pos)
            out: dict[str, Any] = {}
            skipped = False
            struct_start = start = pos
            while True:
                ttype = buf[pos]
                if ttype == 0:
                    pos += 1
                    break
                ttype, fid = unpack_header(buf, pos)
                pos += 3
                entry = fields.get(fid)
                if entry is None:
                    start = pos
                    try:
                        pos = skip(buf, pos, ttype, depth + 1)
                    except (_Fail, *_TRUNCATED) as e:
                        raise _field_loop_errors(e, f".<field id {fid}>", start, len(buf)) from None
                    out[f"{UNKNOWN_KEY}{fid}"] = None
                    skipped = True
                    continue
                name, want, read, wire = entry
                if ttype != want:
                    fail = _Fail(f"field {fid} (`{name}`) has wire type {_TTYPE_NAMES.get(ttype, ttype)}, "
                                 f"expected {wire}", pos - 3)
                    fail.parts.append(f".{name}")
                    raise fail
                start = pos
                try:
                    out[name], pos = read(buf, pos, depth + 1)
                except (_Fail, *_TRUNCATED) as e:
                    raise _field_loop_errors(e, f".{name}", start, len(buf)) from None
            if union and (skipped or len(out) != 1):
                _union_check(cls, out, struct_start)
            return out, pos
        return read_struct

    def build_struct_writer(self, cls: type, plan: list[tuple[int, str, Any, Writer]]) -> Writer:
        headers: dict[int, bytes] = {}

        def write_struct(out: bytearray, obj: Any) -> None:
            if not headers:
                headers.update((fid, _BE_FIELD_HEADER.pack(tid, fid)) for fid, _, tid, _ in plan)
            d = obj.__dict__
            for fid, name, _, write in plan:
                v = d[name]
                if v is not None:
                    out += headers[fid]
                    write(out, v)
            out.append(0)
        return write_struct

    def skip(self, buf: bytes, pos: int, type_id: int, depth: int) -> int:
        """Skip one value of a field this reader does not know (Thrift's forward compatibility)."""
        _check_depth(depth, pos)
        fixed = {2: 1, 3: 1, 4: 8, 6: 2, 8: 4, 10: 8}.get(type_id)
        if fixed is not None:
            if pos + fixed > len(buf):
                raise _truncated(pos, len(buf))
            return pos + fixed
        if type_id == 11:
            n = _BE_I32.unpack_from(buf, pos)[0]
            _check_count(n, pos + 4, buf, "string")
            return pos + 4 + n
        if type_id == 12:
            while True:
                ttype = buf[pos]
                if ttype == 0:
                    return pos + 1
                pos = self.skip(buf, pos + 3, ttype, depth + 1)
        if type_id in (14, 15):
            etype, n = _BE_LIST_HEADER.unpack_from(buf, pos)
            pos += 5
            _check_count(n, pos, buf, "list")
            for _ in range(n):
                pos = self.skip(buf, pos, etype, depth + 1)
            return pos
        if type_id == 13:
            ktype, vtype, n = _BE_MAP_HEADER.unpack_from(buf, pos)
            pos += 6
            _check_count(n, pos, buf, "map")
            for _ in range(n):
                pos = self.skip(buf, self.skip(buf, pos, ktype, depth + 1), vtype, depth + 1)
            return pos
        raise _Fail(f"unknown binary protocol type id {type_id}", pos)


def _quote(k: Any) -> str:
    return f'"{k}"' if isinstance(k, str) and k != "(key)" else str(k)


# --- compact protocol ------------------------------------------------------------------------------


def _bool_as_one(ctype: int) -> int:
    """Compact writers name bool elements 1 (TRUE) or 2 (FALSE): both mean bool."""
    return 1 if ctype == 2 else ctype


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise _Fail("varint longer than 10 bytes", pos)


_SMALL_VARINTS = [bytes((i,)) for i in range(128)]


def _varint(n: int) -> bytes:
    if n < 128:
        return _SMALL_VARINTS[n]
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _zigzag(n: int) -> int:
    return (n << 1) ^ (n >> 63)


def _unzigzag(z: int) -> int:
    return (z >> 1) ^ -(z & 1)


class _Compact(_Codec):
    name: Protocol = "compact"

    def type_id(self, kind: str, spec: Any) -> int:
        return _CTYPE[_wire_name(kind, spec) if kind in ("base", "enum") else kind]

    def base_reader(self, name: str) -> Reader:
        if name == "bool":  # inside containers; fields carry the value in their header
            def read_bool(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
                b = buf[pos]
                if b not in (0, 1, 2):
                    raise _Fail(f"invalid bool byte {b}", pos)
                return b == 1, pos + 1
            return read_bool
        if name == "byte":
            def read_byte(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
                b = buf[pos]
                return (b - 256 if b > 127 else b), pos + 1
            return read_byte
        if name == "double":
            unpack = _LE_F64.unpack_from

            def read_double(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
                return unpack(buf, pos)[0], pos + 8
            return read_double
        if name == "string":
            def read_string(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
                n, pos = _read_varint(buf, pos)
                return _read_string_at(buf, pos, n)
            return read_string
        check = _int_range(name)

        def read_int(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
            start = pos
            z, pos = _read_varint(buf, pos)
            v = (z >> 1) ^ -(z & 1)
            try:
                check(v)
            except _Fail as e:
                e.offset = start
                raise
            return v, pos
        return read_int

    def base_writer(self, name: str) -> Writer:
        if name == "bool":
            def write_bool(out: bytearray, v: Any) -> None:
                out.append(1 if v else 2)
            return write_bool
        if name == "byte":
            def write_byte(out: bytearray, v: Any) -> None:
                out.append(v & 0xFF)
            return write_byte
        if name == "double":
            pack = _LE_F64.pack

            def write_double(out: bytearray, v: Any) -> None:
                out += pack(v)
            return write_double
        if name == "string":
            def write_string(out: bytearray, v: Any) -> None:
                data = v.encode("utf-8")
                out += _varint(len(data))
                out += data
            return write_string

        def write_int(out: bytearray, v: Any) -> None:
            out += _varint((v << 1) ^ (v >> 63))
        return write_int

    def list_reader(self, kind: str, elem: Reader, elem_id: int, elem_spec: tuple[str, Any]) -> Reader:
        def read_list(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
            _check_depth(depth, pos)
            start = pos
            header = buf[pos]
            pos += 1
            n, etype = header >> 4, header & 0x0F
            if n == 15:
                n, pos = _read_varint(buf, pos)
            if n and _bool_as_one(etype) != elem_id:
                raise _Fail(f"{kind} of {_CTYPE_NAMES.get(etype, etype)}, expected {kind} of "
                            f"{_CTYPE_NAMES[elem_id]}", start)
            _check_count(n, pos, buf, kind)
            out = []
            i = 0
            try:
                for i in range(n):  # noqa: B007 (i names the failing element)
                    v, pos = elem(buf, pos, depth + 1)
                    out.append(v)
            except (_Fail, *_TRUNCATED) as e:
                raise _field_loop_errors(e, f"[{i}]", pos, len(buf)) from None
            return out, pos
        return read_list

    def list_writer(self, kind: str, elem: Writer, elem_id: int, elem_spec: tuple[str, Any]) -> Writer:
        def write_list(out: bytearray, v: Any) -> None:
            n = len(v)
            if n < 15:
                out.append((n << 4) | elem_id)
            else:
                out.append(0xF0 | elem_id)
                out += _varint(n)
            for item in v:
                elem(out, item)
        return write_list

    def map_reader(self, key: Reader, key_id: int, value: Reader, value_id: int) -> Reader:
        def read_map(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
            _check_depth(depth, pos)
            start = pos
            n, pos = _read_varint(buf, pos)
            out: dict[Any, Any] = {}
            if n == 0:
                return out, pos
            types = buf[pos]
            pos += 1
            ktype, vtype = types >> 4, types & 0x0F
            if (_bool_as_one(ktype), _bool_as_one(vtype)) != (key_id, value_id):
                raise _Fail(f"map<{_CTYPE_NAMES.get(ktype, ktype)}, {_CTYPE_NAMES.get(vtype, vtype)}>, expected "
                            f"map<{_CTYPE_NAMES[key_id]}, {_CTYPE_NAMES[value_id]}>", start)
            _check_count(n, pos, buf, "map")
            k: Any = "(key)"
            try:
                for _ in range(n):
                    k = "(key)"
                    k, pos = key(buf, pos, depth + 1)
                    out[k], pos = value(buf, pos, depth + 1)
            except (_Fail, *_TRUNCATED) as e:
                raise _field_loop_errors(e, f"[{_quote(k)}]", pos, len(buf)) from None
            return out, pos
        return read_map

    def map_writer(self, key: Writer, key_id: int, value: Writer, value_id: int) -> Writer:
        types = bytes(((key_id << 4) | value_id,))

        def write_map(out: bytearray, v: Any) -> None:
            if not v:
                out.append(0)
                return
            out += _varint(len(v))
            out += types
            for k, item in v.items():
                key(out, k)
                value(out, item)
        return write_map

    def build_struct_reader(self, cls: type, fields: dict[int, Any], union: bool) -> Reader:
        skip = self.skip

        def read_struct(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
            _check_depth(depth, pos)
            out: dict[str, Any] = {}
            skipped = False
            last = 0
            struct_start = start = pos
            while True:
                header = buf[pos]
                pos += 1
                if header == 0:
                    break
                ctype, delta = header & 0x0F, header >> 4
                if delta:
                    fid = last + delta
                else:
                    z, pos = _read_varint(buf, pos)
                    fid = (z >> 1) ^ -(z & 1)
                last = fid
                entry = fields.get(fid)
                if entry is None:
                    start = pos
                    try:
                        pos = skip(buf, pos, ctype, depth + 1)
                    except (_Fail, *_TRUNCATED) as e:
                        raise _field_loop_errors(e, f".<field id {fid}>", start, len(buf)) from None
                    out[f"{UNKNOWN_KEY}{fid}"] = None
                    skipped = True
                    continue
                name, want, read, wire = entry
                if want == 1 and ctype in (1, 2):  # a bool field: the value is the type
                    out[name] = ctype == 1
                    continue
                if ctype != want:
                    fail = _Fail(f"field {fid} (`{name}`) has wire type {_CTYPE_NAMES.get(ctype, ctype)}, "
                                 f"expected {wire}", pos - 1)
                    fail.parts.append(f".{name}")
                    raise fail
                start = pos
                try:
                    out[name], pos = read(buf, pos, depth + 1)
                except (_Fail, *_TRUNCATED) as e:
                    raise _field_loop_errors(e, f".{name}", start, len(buf)) from None
            if union and (skipped or len(out) != 1):
                _union_check(cls, out, struct_start)
            return out, pos
        return read_struct

    def build_struct_writer(self, cls: type, plan: list[tuple[int, str, Any, Writer]]) -> Writer:
        def write_struct(out: bytearray, obj: Any) -> None:
            d = obj.__dict__
            last = 0
            for fid, name, ctype, write in plan:
                v = d[name]
                if v is None:
                    continue
                is_bool = ctype == 1
                t = (1 if v else 2) if is_bool else ctype
                delta = fid - last
                if 0 < delta <= 15:
                    out.append((delta << 4) | t)
                else:
                    out.append(t)
                    out += _varint(_zigzag(fid))
                last = fid
                if not is_bool:
                    write(out, v)
            out.append(0)
        return write_struct

    def skip(self, buf: bytes, pos: int, type_id: int, depth: int) -> int:
        _check_depth(depth, pos)
        if type_id in (1, 2):  # a bool field: nothing follows the header
            return pos
        if type_id == 3:
            if pos >= len(buf):
                raise _truncated(pos, len(buf))
            return pos + 1
        if type_id in (4, 5, 6):
            return _read_varint(buf, pos)[1]
        if type_id == 7:
            if pos + 8 > len(buf):
                raise _truncated(pos, len(buf))
            return pos + 8
        if type_id == 8:
            n, pos = _read_varint(buf, pos)
            _check_count(n, pos, buf, "string")
            return pos + n
        if type_id == 12:
            while True:
                header = buf[pos]
                pos += 1
                if header == 0:
                    return pos
                if not header >> 4:
                    pos = _read_varint(buf, pos)[1]
                pos = self.skip(buf, pos, header & 0x0F, depth + 1)
        if type_id in (9, 10):
            header = buf[pos]
            pos += 1
            n, etype = header >> 4, header & 0x0F
            if n == 15:
                n, pos = _read_varint(buf, pos)
            _check_count(n, pos, buf, "list")
            for _ in range(n):
                pos = self._skip_element(buf, pos, etype, depth + 1)
            return pos
        if type_id == 11:
            n, pos = _read_varint(buf, pos)
            if n == 0:
                return pos
            types = buf[pos]
            pos += 1
            _check_count(n, pos, buf, "map")
            for _ in range(n):
                pos = self._skip_element(buf, pos, types >> 4, depth + 1)
                pos = self._skip_element(buf, pos, types & 0x0F, depth + 1)
            return pos
        raise _Fail(f"unknown compact protocol type id {type_id}", pos)

    def _skip_element(self, buf: bytes, pos: int, type_id: int, depth: int) -> int:
        """Container elements of type bool take one byte (fields carry theirs in the header)."""
        if type_id in (1, 2):
            if pos >= len(buf):
                raise _truncated(pos, len(buf))
            return pos + 1
        return self.skip(buf, pos, type_id, depth)


_CODECS: dict[str, _Codec] = {"binary": _Binary(), "compact": _Compact()}


def _codec(protocol: str) -> _Codec:
    codec = _CODECS.get(protocol)
    if codec is None:
        raise ValueError(f"unknown Thrift protocol {protocol!r}: expected one of {', '.join(PROTOCOLS)}")
    return codec


# --- public API ------------------------------------------------------------------------------------


def dumps(model: BaseModel, protocol: Protocol = "binary") -> bytes:
    """Encode a model as one Thrift struct in the binary or compact protocol (no message header).

    Unset optional fields and union members are not written; every other field is.
    """
    out = bytearray()
    _codec(protocol).struct_writer(type(model))(out, model)
    return bytes(out)


def loads(data: bytes | bytearray | memoryview, type: type[M], protocol: Protocol = "binary", *,
          strict: bool = False, source: str | None = None) -> M:
    """Decode one Thrift struct of `type` (a generated model class).

    Raises `DecodeError` (path of the problem, byte offset) or `VersionError`, like `externspec.loads`.
    """
    buf = bytes(data)
    reader = _codec(protocol).struct_reader(type)
    try:
        with gc_paused():
            raw, end = reader(buf, 0, 1)
    except _Fail as e:
        where = f" (at byte {e.offset})" if e.offset >= 0 else ""
        raise DecodeError([(e.path(), f"{e.message}{where}")], source) from None
    except _TRUNCATED:  # the very first field header
        raise DecodeError([("$", f"{_truncated(0, len(buf)).message} (at byte 0)")], source) from None
    if end != len(buf):
        raise DecodeError([("$", f"{len(buf) - end} trailing bytes after the {protocol} document "
                                 f"(it ends at byte {end}): not a single `{type.__name__}`")], source)
    return _validate(raw, type, strict=strict, source=source)


def _validate(raw: dict[str, Any], type: type[M], *, strict: bool, source: str | None) -> M:
    """The decoded tree through pydantic, with the same version rules as JSON (`wire.loads`)."""
    policy = version.policy_for(type)
    doc_version = policy.raw_version(raw)
    if policy.needs_upgrade(doc_version):
        # An older major: the JSON upgraders run on the tree. Fields are matched by id, so a renamed
        # field already carries its new name; a field the reader no longer has is skipped by id.
        return wire._load_upgraded(_json_ready(raw), type, policy, doc_version, strict, source)
    extra: Literal["forbid"] | None = "forbid" if (strict or policy.forbid_unknown) else None
    try:
        with gc_paused():
            model = type.model_validate(raw, extra=extra)
    except ValidationError as exc:
        errors = decode_errors(type, exc)
        unknown = [(p, m) for p, m in errors if m.startswith("unknown key")]
        if policy.forbid_unknown and not strict:
            doc_version = policy.raw_version(raw)
            if doc_version is None and len(unknown) == len(errors):
                return _validate_lenient(raw, type, policy, source)
            policy.check_raw(doc_version, unknown, source)
        raise DecodeError(errors, source) from None
    policy.check(model, source)
    return model


def _json_ready(value: Any) -> Any:
    """The decoded tree as JSON-shaped data for the upgraders (non-finite floats as torch writes them)."""
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_ready(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, enum.IntEnum):
        return int(value)
    return value


def _validate_lenient(raw: dict[str, Any], type: type[M], policy: version.Policy, source: str | None) -> M:
    """A torch-written (unversioned) document: unknown fields are ignored, as torch does."""
    try:
        with gc_paused():
            model = type.model_validate(raw)
    except ValidationError as exc:
        raise DecodeError(decode_errors(type, exc), source) from None
    policy.check(model, source)
    return model
