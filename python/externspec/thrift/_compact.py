"""Thrift's compact protocol: zigzag varints, little-endian doubles, field-id deltas packed with
the type into one byte, bools carried in the field header. See `externspec.thrift`."""

from __future__ import annotations

from typing import Any

from ._base import (
    CTYPE,
    CTYPE_NAMES,
    LE_F64,
    TRUNCATED,
    UNKNOWN_KEY,
    Codec,
    Fail,
    Protocol,
    Reader,
    Writer,
    check_count,
    check_depth,
    field_loop_errors,
    int_range,
    quote,
    read_string_at,
    truncated,
    union_check,
    wire_name,
)


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
            raise Fail("syntax", "varint longer than 10 bytes", pos)


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


class Compact(Codec):
    name: Protocol = "compact"
    FIELD_HEADER_BYTES = 1
    MIN_VALUE_BYTES = {"bool": 0, "byte": 1, "i16": 1, "i32": 1, "enum": 1, "i64": 1, "double": 8,
                       "string": 1, "list": 1, "set": 1, "map": 1}  # a bool field lives in its header

    def type_id(self, kind: str, spec: Any) -> int:
        return CTYPE[wire_name(kind, spec) if kind in ("base", "enum") else kind]

    def base_reader(self, name: str) -> Reader:
        if name == "bool":  # inside containers; fields carry the value in their header
            def read_bool(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
                b = buf[pos]
                if b not in (0, 1, 2):
                    raise Fail("syntax", f"invalid bool byte {b}", pos)
                return b == 1, pos + 1
            return read_bool
        if name == "byte":
            def read_byte(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
                b = buf[pos]
                return (b - 256 if b > 127 else b), pos + 1
            return read_byte
        if name == "double":
            unpack = LE_F64.unpack_from

            def read_double(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
                return unpack(buf, pos)[0], pos + 8
            return read_double
        if name == "string":
            def read_string(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
                n, pos = _read_varint(buf, pos)
                return read_string_at(buf, pos, n)
            return read_string
        check = int_range(name)

        def read_int(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
            start = pos
            z, pos = _read_varint(buf, pos)
            v = (z >> 1) ^ -(z & 1)
            try:
                check(v)
            except Fail as e:
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
            pack = LE_F64.pack

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
        min_elem = self.min_bytes(*elem_spec) if elem_spec[0] == "struct" else 1

        def read_list(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
            check_depth(depth, pos)
            start = pos
            header = buf[pos]
            pos += 1
            n, etype = header >> 4, header & 0x0F
            if n == 15:
                n, pos = _read_varint(buf, pos)
            if n and _bool_as_one(etype) != elem_id:
                raise Fail("type", f"{kind} of {CTYPE_NAMES.get(etype, etype)}, expected {kind} of "
                            f"{CTYPE_NAMES[elem_id]}", start)
            check_count(n, pos, buf, kind, min_elem)
            out = []
            i = 0
            try:
                for i in range(n):  # noqa: B007 (i names the failing element)
                    v, pos = elem(buf, pos, depth + 1)
                    out.append(v)
            except (Fail, *TRUNCATED) as e:
                raise field_loop_errors(e, f"[{i}]", pos, len(buf)) from None
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
            check_depth(depth, pos)
            start = pos
            n, pos = _read_varint(buf, pos)
            out: dict[Any, Any] = {}
            if n == 0:
                return out, pos
            types = buf[pos]
            pos += 1
            ktype, vtype = types >> 4, types & 0x0F
            if (_bool_as_one(ktype), _bool_as_one(vtype)) != (key_id, value_id):
                raise Fail("type", f"map<{CTYPE_NAMES.get(ktype, ktype)}, {CTYPE_NAMES.get(vtype, vtype)}>, "
                                    f"expected map<{CTYPE_NAMES[key_id]}, {CTYPE_NAMES[value_id]}>", start)
            check_count(n, pos, buf, "map")
            k: Any = "(key)"
            try:
                for _ in range(n):
                    k = "(key)"
                    k, pos = key(buf, pos, depth + 1)
                    out[k], pos = value(buf, pos, depth + 1)
            except (Fail, *TRUNCATED) as e:
                raise field_loop_errors(e, f"[{quote(k)}]", pos, len(buf)) from None
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
            check_depth(depth, pos)
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
                    except (Fail, *TRUNCATED) as e:
                        raise field_loop_errors(e, f".<field id {fid}>", start, len(buf)) from None
                    out[f"{UNKNOWN_KEY}{fid}"] = None
                    skipped = True
                    continue
                name, want, read, wire = entry
                if want == 1 and ctype in (1, 2):  # a bool field: the value is the type
                    out[name] = ctype == 1
                    continue
                if ctype != want:
                    fail = Fail("type", f"field {fid} (`{name}`) has wire type {CTYPE_NAMES.get(ctype, ctype)}, "
                                 f"expected {wire}", pos - 1)
                    fail.parts.append(f".{name}")
                    raise fail
                start = pos
                try:
                    out[name], pos = read(buf, pos, depth + 1)
                except (Fail, *TRUNCATED) as e:
                    raise field_loop_errors(e, f".{name}", start, len(buf)) from None
            if union and (skipped or len(out) != 1):
                union_check(cls, out, struct_start)
            return out, pos
        return read_struct

    def build_struct_writer(self, cls: type, plan: list[tuple[int, str, Any, Writer]]) -> Writer:
        def write_struct(out: bytearray, obj: Any) -> None:
            d = obj.__dict__  # a union's holds only its member: unset fields are absent
            last = 0
            for fid, name, ctype, write in plan:
                v = d.get(name)
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
        check_depth(depth, pos)
        if type_id in (1, 2):  # a bool field: nothing follows the header
            return pos
        if type_id == 3:
            if pos >= len(buf):
                raise truncated(pos, len(buf))
            return pos + 1
        if type_id in (4, 5, 6):
            return _read_varint(buf, pos)[1]
        if type_id == 7:
            if pos + 8 > len(buf):
                raise truncated(pos, len(buf))
            return pos + 8
        if type_id == 8:
            n, pos = _read_varint(buf, pos)
            check_count(n, pos, buf, "string")
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
            check_count(n, pos, buf, "list")
            for _ in range(n):
                pos = self._skip_element(buf, pos, etype, depth + 1)
            return pos
        if type_id == 11:
            n, pos = _read_varint(buf, pos)
            if n == 0:
                return pos
            types = buf[pos]
            pos += 1
            check_count(n, pos, buf, "map")
            for _ in range(n):
                pos = self._skip_element(buf, pos, types >> 4, depth + 1)
                pos = self._skip_element(buf, pos, types & 0x0F, depth + 1)
            return pos
        raise Fail("syntax", f"unknown compact protocol type id {type_id}", pos)

    def _skip_element(self, buf: bytes, pos: int, type_id: int, depth: int) -> int:
        """Container elements of type bool take one byte (fields carry theirs in the header)."""
        if type_id in (1, 2):
            if pos >= len(buf):
                raise truncated(pos, len(buf))
            return pos + 1
        return self.skip(buf, pos, type_id, depth)
