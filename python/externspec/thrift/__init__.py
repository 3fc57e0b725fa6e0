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
  exactly as unknown JSON keys are (see `externspec.wire.version`);
* a known field id with another wire type, an invalid enum value or UTF-8 string, trailing bytes,
  truncated input, and nesting deeper than `MAX_JSON_DEPTH` are `DecodeError`s with a path
  (`$.nodes[3].node.target`) and the byte offset; never an IndexError or a RecursionError.
Enums travel as i32, doubles as IEEE 754 (binary big-endian, compact little-endian).

Layout: `_base` (wire types, the reader/writer framework, errors), `_binary`,
`_compact`; this module holds the API and the validation shared with JSON.
"""

from __future__ import annotations

import enum
import math
from typing import Any, TypeVar

from pydantic import BaseModel

from ..errors import DecodeError, problem
from ..wire import decision, limits, version
from ._base import PROTOCOLS, TRUNCATED, UNKNOWN_KEY, Codec, Fail, Protocol, truncated
from ._binary import Binary
from ._compact import Compact

__all__ = ["PROTOCOLS", "UNKNOWN_KEY", "Protocol", "dumps", "loads"]

M = TypeVar("M", bound=BaseModel)


_CODECS: dict[str, Codec] = {"binary": Binary(), "compact": Compact()}


def _codec(protocol: str) -> Codec:
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
          strict: bool = False, source: str | None = None, max_bytes: int | None = None) -> M:
    """Decode one Thrift struct of `type` (a generated model class).

    Raises `DecodeError` (path of the problem, byte offset) or `VersionError`, like `externspec.loads`.
    A document larger than `max_bytes` (default `wire.MAX_JSON_BYTES`, the JSON limit) is refused
    before decoding: a Thrift document decodes to up to ~250x its size (SECURITY.md), so lower it
    on a memory-constrained service.
    """
    buf = bytes(data)
    limits.check_limits(buf, max_bytes, None, source)
    reader = _codec(protocol).struct_reader(type)
    try:
        with decision.gc_paused():
            raw, end = reader(buf, 0, 1)
    except Fail as e:
        where = f" (at byte {e.offset})" if e.offset >= 0 else ""
        raise DecodeError([problem(e.kind, e.path(), f"{e.message}{where}")], source) from None
    except TRUNCATED:  # the very first field header
        raise DecodeError([problem("truncated", "$", f"{truncated(0, len(buf)).message} (at byte 0)")],
                          source) from None
    if end != len(buf):
        raise DecodeError([problem("truncated", "$", f"{len(buf) - end} trailing bytes after the {protocol} "
                                   f"document (it ends at byte {end}): not a single `{type.__name__}`")], source)
    return _validate(raw, type, strict=strict, source=source)


def _validate(raw: dict[str, Any], type: type[M], *, strict: bool, source: str | None) -> M:
    """The decoded tree through pydantic, by the same decode decision as JSON (`wire.decision.validate_document`)."""
    policy = version.policy_for(type)
    return decision.validate_document(
        type, lambda extra: type.model_validate(raw, extra=extra), strict=strict, source=source,
        raw_version=lambda: policy.raw_version(raw),
        # An older major: the JSON upgraders run on the tree. Fields are matched by id, so a renamed
        # field already carries its new name; a field the reader no longer has is skipped by id.
        tree=lambda: _json_ready(raw))


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
