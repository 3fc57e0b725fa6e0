"""Thrift's binary protocol: big-endian fixed-width ints and doubles, i32-length strings,
(type, i16 id) field headers. See `externspec.thrift`."""

from __future__ import annotations

import struct
from typing import Any

from ._base import (
    BE_FIELD_HEADER,
    BE_FIXED,
    BE_I32,
    BE_LIST_HEADER,
    BE_MAP_HEADER,
    TRUNCATED,
    TTYPE,
    TTYPE_NAMES,
    UNKNOWN_KEY,
    Codec,
    Fail,
    Protocol,
    Reader,
    Writer,
    check_count,
    check_depth,
    field_loop_errors,
    quote,
    read_string_at,
    truncated,
    union_check,
    wire_name,
)


class Binary(Codec):
    name: Protocol = "binary"
    FIELD_HEADER_BYTES = 3
    MIN_VALUE_BYTES = {"bool": 1, "byte": 1, "i16": 2, "i32": 4, "enum": 4, "i64": 8, "double": 8,
                       "string": 4, "list": 5, "set": 5, "map": 6}

    def type_id(self, kind: str, spec: Any) -> int:
        return TTYPE[wire_name(kind, spec) if kind in ("base", "enum") else kind]

    def base_reader(self, name: str) -> Reader:
        if name == "bool":
            def read_bool(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
                b = buf[pos]
                if b > 1:
                    raise Fail("syntax", f"invalid bool byte {b}", pos)
                return b == 1, pos + 1
            return read_bool
        if name == "string":
            unpack_i32 = BE_I32.unpack_from

            def read_string(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
                return read_string_at(buf, pos + 4, unpack_i32(buf, pos)[0])
            return read_string
        code, size = BE_FIXED[name]
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
            pack_i32 = BE_I32.pack

            def write_string(out: bytearray, v: Any) -> None:
                data = v.encode("utf-8")
                out += pack_i32(len(data))
                out += data
            return write_string
        pack = struct.Struct(">" + BE_FIXED[name][0]).pack

        def write_fixed(out: bytearray, v: Any) -> None:
            out += pack(v)
        return write_fixed

    def list_reader(self, kind: str, elem: Reader, elem_id: int, elem_spec: tuple[str, Any]) -> Reader:
        unpack_header = BE_LIST_HEADER.unpack_from
        fixed = BE_FIXED.get(elem_spec[1]) if elem_spec[0] == "base" else None
        min_elem = self.min_bytes(*elem_spec) if elem_spec[0] == "struct" else 1

        def read_list(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
            check_depth(depth, pos)
            etype, n = unpack_header(buf, pos)
            if etype != elem_id:
                raise Fail("type", f"{kind} of {TTYPE_NAMES.get(etype, etype)}, expected {kind} of "
                            f"{TTYPE_NAMES[elem_id]}", pos)
            pos += 5
            check_count(n, pos, buf, kind, min_elem)
            if fixed is not None:  # one C call for a run of numbers
                end = pos + n * fixed[1]
                if end > len(buf):
                    raise truncated(pos, len(buf))
                return list(struct.unpack_from(f">{n}{fixed[0]}", buf, pos)), end
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
        pack_header = BE_LIST_HEADER.pack
        fixed = BE_FIXED.get(elem_spec[1]) if elem_spec[0] == "base" else None

        def write_list(out: bytearray, v: Any) -> None:
            out += pack_header(elem_id, len(v))
            if fixed is not None:
                out += struct.pack(f">{len(v)}{fixed[0]}", *v)
                return
            for item in v:
                elem(out, item)
        return write_list

    def map_reader(self, key: Reader, key_id: int, value: Reader, value_id: int) -> Reader:
        unpack_header = BE_MAP_HEADER.unpack_from

        def read_map(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
            check_depth(depth, pos)
            ktype, vtype, n = unpack_header(buf, pos)
            if n and (ktype, vtype) != (key_id, value_id):
                raise Fail("type", f"map<{TTYPE_NAMES.get(ktype, ktype)}, {TTYPE_NAMES.get(vtype, vtype)}>, "
                                    f"expected map<{TTYPE_NAMES[key_id]}, {TTYPE_NAMES[value_id]}>", pos)
            pos += 6
            check_count(n, pos, buf, "map")
            out = {}
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
        pack_header = BE_MAP_HEADER.pack

        def write_map(out: bytearray, v: Any) -> None:
            out += pack_header(key_id, value_id, len(v))
            for k, item in v.items():
                key(out, k)
                value(out, item)
        return write_map

    def build_struct_reader(self, cls: type, fields: dict[int, Any], union: bool) -> Reader:
        unpack_header = BE_FIELD_HEADER.unpack_from
        skip = self.skip

        def read_struct(buf: bytes, pos: int, depth: int) -> tuple[Any, int]:
            check_depth(depth, pos)
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
                    except (Fail, *TRUNCATED) as e:
                        raise field_loop_errors(e, f".<field id {fid}>", start, len(buf)) from None
                    out[f"{UNKNOWN_KEY}{fid}"] = None
                    skipped = True
                    continue
                name, want, read, wire = entry
                if ttype != want:
                    fail = Fail("type", f"field {fid} (`{name}`) has wire type {TTYPE_NAMES.get(ttype, ttype)}, "
                                 f"expected {wire}", pos - 3)
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
        headers: dict[int, bytes] = {}

        def write_struct(out: bytearray, obj: Any) -> None:
            if not headers:
                headers.update((fid, BE_FIELD_HEADER.pack(tid, fid)) for fid, _, tid, _ in plan)
            d = obj.__dict__  # a union's holds only its member: unset fields are absent
            for fid, name, _, write in plan:
                v = d.get(name)
                if v is not None:
                    out += headers[fid]
                    write(out, v)
            out.append(0)
        return write_struct

    def skip(self, buf: bytes, pos: int, type_id: int, depth: int) -> int:
        """Skip one value of a field this reader does not know (Thrift's forward compatibility)."""
        check_depth(depth, pos)
        fixed = {2: 1, 3: 1, 4: 8, 6: 2, 8: 4, 10: 8}.get(type_id)
        if fixed is not None:
            if pos + fixed > len(buf):
                raise truncated(pos, len(buf))
            return pos + fixed
        if type_id == 11:
            n = BE_I32.unpack_from(buf, pos)[0]
            check_count(n, pos + 4, buf, "string")
            return pos + 4 + n
        if type_id == 12:
            while True:
                ttype = buf[pos]
                if ttype == 0:
                    return pos + 1
                pos = self.skip(buf, pos + 3, ttype, depth + 1)
        if type_id in (14, 15):
            etype, n = BE_LIST_HEADER.unpack_from(buf, pos)
            pos += 5
            check_count(n, pos, buf, "list")
            for _ in range(n):
                pos = self.skip(buf, pos, etype, depth + 1)
            return pos
        if type_id == 13:
            ktype, vtype, n = BE_MAP_HEADER.unpack_from(buf, pos)
            pos += 6
            check_count(n, pos, buf, "map")
            for _ in range(n):
                pos = self.skip(buf, self.skip(buf, pos, ktype, depth + 1), vtype, depth + 1)
            return pos
        raise Fail("syntax", f"unknown binary protocol type id {type_id}", pos)
