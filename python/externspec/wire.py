"""JSON in and out of the generated models, with the wire rules of docs/wire-format.md.

* `loads`/`load` validate in one pass in pydantic-core (Rust) with the garbage collector paused:
  the models are acyclic trees, and collections triggered by millions of new objects otherwise
  cost most of the decode time.
* Errors become `DecodeError`s with JSON paths; pydantic's own exceptions never escape.
* Unknown keys: ignored in torch-written (unversioned) documents, as torch does; rejected with
  `strict=True` everywhere; in versioned documents see `externspec.version`.
* A versioned document of an older major goes through the registered upgraders
  (`externspec.upgrade`) and is then validated like any other; the fast path never pays for it.
* Hostile input is bounded before it costs anything (SECURITY.md): a document larger than
  `MAX_JSON_BYTES` is a `DecodeError` before parsing (`load` checks the file size before reading);
  containers nested deeper than `MAX_JSON_DEPTH` levels below the top-level value are a
  `DecodeError` from the parser itself, never a RecursionError. Both are per-call keywords
  (`max_bytes`, `max_depth`) and process defaults (assign `externspec.wire.MAX_JSON_BYTES`).
  200 is pydantic-core's own recursion limit, so `max_depth` can only go lower; a lower limit is
  checked by a pre-scan of the brackets that only calls which ask for it pay.
"""

from __future__ import annotations

import gc
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError

from . import upgrade, version
from ._modelbase import decoder
from .errors import DecodeError, VersionError

M = TypeVar("M", bound=BaseModel)

MAX_JSON_DEPTH = 200  # pydantic-core's parser limit: the most `max_depth` can be
MAX_JSON_BYTES = 256 * 1024 * 1024  # default size limit (UTF-8 bytes of the JSON text)
# A failing document reports at most this many problems (C++: externspec::MAX_DECODE_ERRORS).
MAX_DECODE_ERRORS = 100

_JSON_TYPE_NAMES = {str: "str", int: "int", float: "float", bool: "bool", type(None): "null",
                    dict: "object", list: "array"}
_EXPECTED = {
    "int_type": "`int`", "string_type": "`str`", "bool_type": "`bool`", "f64_type": "`float`",
    "list_type": "`array`", "dict_type": "`object`", "model_type": "`object`",
    "model_attributes_type": "`object`", "int_from_float": "`int`",
}


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (restored afterwards, even on error)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _unwrap(tp: Any) -> Any:
    """Strip Optional[...] and Annotated[...] from a field annotation."""
    while True:
        origin = get_origin(tp)
        if origin is Union:
            args = [a for a in get_args(tp) if a is not type(None)]
            tp = args[0] if len(args) == 1 else tp
            if len(args) != 1:
                return tp
        elif origin is not None and hasattr(tp, "__metadata__"):
            tp = get_args(tp)[0]
        else:
            return tp


def json_path(model: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    """Render a pydantic error location as a JSON path, walking the model types.

    Field names become `.name`, list indices `[3]`, map keys `["key"]`.
    """
    out = "$"
    tp: Any = model
    for part in loc:
        origin = get_origin(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel) and isinstance(part, str):
            out += f".{part}"
            field = tp.model_fields.get(part)
            tp = _unwrap(field.annotation) if field else None
        elif origin is list and isinstance(part, int):
            out += f"[{part}]"
            tp = _unwrap(get_args(tp)[0])
        elif origin is dict and isinstance(part, str):
            if part == "[key]":
                out += "(key)"
            else:
                out += f"[{json.dumps(part)}]"
                tp = _unwrap(get_args(tp)[1])
        else:
            out += f"[{part}]" if isinstance(part, int) else f".{part}"
            tp = None
    return out


def _message(err: Any) -> str:
    kind = err["type"]
    got = _JSON_TYPE_NAMES.get(type(err.get("input")), type(err.get("input")).__name__)
    if kind == "f64_type" and isinstance(err.get("input"), float):
        return 'expected `float`: a bare NaN or Infinity literal is not JSON; write "NaN", "Infinity" or "-Infinity"'
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}, got `{got}`"
    if kind == "missing":
        return "missing required field"
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "enum":
        return f"invalid enum value {err.get('input')!r}: {err['msg'][0].lower()}{err['msg'][1:]}"
    if kind in ("less_than_equal", "greater_than_equal"):
        return f"integer {err.get('input')} out of range ({err['msg'][0].lower()}{err['msg'][1:]})"
    if kind == "json_invalid":
        return err["msg"].replace("Invalid JSON: recursion limit exceeded",
                                  f"nesting deeper than {MAX_JSON_DEPTH} levels")
    return str(err["msg"])


def decode_errors(model: type[BaseModel], exc: ValidationError) -> list[tuple[str, str]]:
    """The problems of a pydantic ValidationError, as (JSON path, message): the first
    MAX_DECODE_ERRORS (a document with more is `decode_error(...).truncated`)."""
    out = []
    for err in exc.errors(include_url=False)[:MAX_DECODE_ERRORS]:
        loc = tuple(err["loc"])
        if err["type"] in ("missing", "extra_forbidden") and loc:
            # Name the key in the message and point at the object that lacks or has it.
            out.append((json_path(model, loc[:-1]), f"{_message(err)} `{loc[-1]}`"))
        else:
            out.append((json_path(model, loc), _message(err)))
    return out


def decode_error(model: type[BaseModel], exc: ValidationError, source: str | None) -> DecodeError:
    """The DecodeError of a failed validation, its list capped at MAX_DECODE_ERRORS."""
    return DecodeError(decode_errors(model, exc), source, truncated=exc.error_count() > MAX_DECODE_ERRORS)


_ESCAPE = re.compile(rb"\\.", re.S)
_STRING = re.compile(rb'"[^"]*"')
_INNERMOST_PAIR = re.compile(rb"\[\]|\{\}")
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


def _utf8_size(data: str | bytes | bytearray) -> int:
    if not isinstance(data, str):
        return len(data)
    return len(data.encode("utf-8", "surrogatepass"))


def check_limits(data: str | bytes | bytearray, max_bytes: int | None = None, max_depth: int | None = None,
                 source: str | None = None) -> None:
    """Raise `DecodeError` if `data` is larger than `max_bytes` or nests containers deeper than
    `max_depth` levels below the top-level value (None: the defaults, MAX_JSON_BYTES and
    MAX_JSON_DEPTH). Cheap at the defaults: a length comparison; the parser enforces 200 levels."""
    limit = MAX_JSON_BYTES if max_bytes is None else max_bytes
    # A str is at most 4 UTF-8 bytes a character: measure exactly only near the limit.
    if (len(data) > limit or (isinstance(data, str) and len(data) * 4 > limit
                              and _utf8_size(data) > limit)):
        raise DecodeError([("$", f"document of {_utf8_size(data)} bytes exceeds the size limit of {limit} bytes")],
                          source)
    if max_depth is None or max_depth == MAX_JSON_DEPTH:
        return
    if not 0 <= max_depth <= MAX_JSON_DEPTH:
        raise ValueError(f"max_depth must be between 0 and {MAX_JSON_DEPTH} (pydantic-core's limit), got {max_depth}")
    if _nesting_exceeds(data if not isinstance(data, str) else data.encode("utf-8", "surrogatepass"), max_depth + 1):
        raise DecodeError([("$", f"nesting deeper than {max_depth} levels")], source)


def _nesting_exceeds(data: bytes | bytearray, levels: int) -> bool:
    """True if containers nest more than `levels` deep (the top-level value counts as one).

    Without a Python-level loop over the bytes: drop escapes and strings, keep only brackets, then
    peel innermost pairs one level per pass. Brackets that do not pair up stop the peeling: the
    parser reports that document's syntax error."""
    brackets = _STRING.sub(b"", _ESCAPE.sub(b"", data)).translate(None, _NOT_BRACKETS)
    for _ in range(levels):
        if not brackets:
            return False
        peeled = _INNERMOST_PAIR.sub(b"", brackets)
        if len(peeled) == len(brackets):
            return False
        brackets = peeled
    return bool(brackets) and _INNERMOST_PAIR.search(brackets) is not None


@decoder  # inside, the models' model_validate_json is pydantic's (outside, it comes here)
def loads(data: str | bytes | bytearray, type: type[M], *, strict: bool = False, source: str | None = None,
          max_bytes: int | None = None, max_depth: int | None = None) -> M:
    """Decode JSON text into `type` (a generated model class).

    Raises `DecodeError` (with the JSON path of each problem) or `VersionError`.
    `source` names the input in error messages (a file path). `max_bytes` and `max_depth` lower or
    raise the size limit and lower the nesting limit for this call (defaults: MAX_JSON_BYTES, MAX_JSON_DEPTH).
    """
    check_limits(data, max_bytes, max_depth, source)
    policy = version.policy_for(type)
    if policy.forbid_unknown and not strict and not policy.needs_upgrade(None) and _surely_unversioned(data):
        # Torch-written: one lenient parse, unknown keys ignored as torch does (the forward-compatible
        # case costs no strict attempt, no error list and no second parse).
        return _validate_json(data, type, None, policy, source)
    extra: Literal["forbid"] | None = "forbid" if (strict or policy.forbid_unknown) else None
    try:
        with gc_paused():
            model = type.model_validate_json(data, extra=extra)
    except ValidationError as exc:
        if policy.forbid_unknown:
            return _reread(data, type, exc, policy, strict, source)
        raise decode_error(type, exc, source) from None
    doc_version = policy.model_version(model)
    if policy.needs_upgrade(doc_version, source):
        return _load_upgraded(json.loads(data), type, policy, doc_version, strict, source)
    policy.check(model, source)
    return model


def _surely_unversioned(data: str | bytes | bytearray) -> bool:
    """True when the text cannot hold a `schema_version` key (not even written with \\u escapes)."""
    if isinstance(data, str):
        return "schema_version" not in data and "\\u" not in data
    return b"schema_version" not in data and b"\\u" not in data


def _validate_json(data: str | bytes | bytearray, type: type[M], extra: Literal["forbid"] | None,
                   policy: version.Policy, source: str | None) -> M:
    try:
        with gc_paused():
            model = type.model_validate_json(data, extra=extra)
    except ValidationError as exc:
        raise decode_error(type, exc, source) from None
    policy.check(model, source)
    return model


class _TopLevelVersion(BaseModel):
    """Reads only a document's top-level `schema_version`, as `json.loads` would give it, without
    building the rest of the tree in Python."""

    model_config = ConfigDict(extra="ignore", defer_build=True)  # built when a document first needs it
    schema_version: Any = None


def _reread(data: str | bytes | bytearray, type: type[M], exc: ValidationError, policy: version.Policy,
            strict: bool, source: str | None) -> M:
    """A versioned type failed strict validation: decide by the document's version."""
    try:
        raw: Any = {"schema_version": _TopLevelVersion.model_validate_json(data).schema_version}
    except ValidationError:  # not JSON, or not an object: the first pass said what is wrong
        raise decode_error(type, exc, source) from None
    doc_version = policy.raw_version(raw)
    if policy.needs_upgrade(doc_version, source):
        return _load_upgraded(json.loads(data), type, policy, doc_version, strict, source)
    if strict:
        raise decode_error(type, exc, source) from None
    if doc_version is None:
        # Torch-written: unknown keys are ignored, as torch does; its problems are the lenient reading's.
        return _validate_json(data, type, None, policy, source)
    error = decode_error(type, exc, source)
    policy.check_raw(doc_version, [(e["path"], e["message"]) for e in error.errors()
                                 if e["message"].startswith("unknown key")],
                     source)
    raise error from None


def _load_upgraded(raw: dict[str, Any], type: type[M], policy: version.Policy, doc_version: tuple[int, int] | None,
                   strict: bool, source: str | None) -> M:
    """Run the upgraders over an older-major document, then validate the result as the reader's
    own version (unknown keys still ignored in a torch-written document, as torch does)."""
    start = doc_version or version.BASELINE_VERSION
    upgraded = upgrade.upgrade(raw, type.__name__, start, policy.reader[0], copy=False, source=source)
    lenient = doc_version is None and not strict  # torch-written: unknown keys ignored, as torch does
    try:
        with gc_paused():
            model = type.model_validate_json(json.dumps(upgraded),
                                             extra=None if lenient else "forbid")
    except ValidationError as exc:
        how = f"after upgrading schema {start[0]}.{start[1]} to {policy.reader[0]}.0"
        errors = [(path, f"{msg} ({how})") for path, msg in decode_errors(type, exc)]
        truncated = exc.error_count() > MAX_DECODE_ERRORS
        unknown = [(path, msg) for path, msg in errors if msg.startswith("unknown key")]
        if unknown and not strict:
            raise VersionError(f"{source + ': ' if source else ''}{unknown[0][0]}: {unknown[0][1]}: the document "
                               f"carries a field the upgraders do not know") from None
        raise DecodeError(errors, source, truncated) from None
    policy.check(model, source)
    return model


def load(path: str | os.PathLike[str], type: type[M], *, strict: bool = False, max_bytes: int | None = None,
         max_depth: int | None = None) -> M:
    """Decode a JSON file into `type`; error messages start with the file path.

    A file larger than the size limit is refused before it is read."""
    limit = MAX_JSON_BYTES if max_bytes is None else max_bytes
    data = read_bounded(path, limit)
    return loads(data, type, strict=strict, source=os.fspath(path), max_bytes=limit, max_depth=max_depth)


def read_bounded(path: str | os.PathLike[str], max_bytes: int | None = None) -> bytes:
    """The bytes of a document file, refused (`DecodeError`) before reading when it is larger than
    `max_bytes` (default MAX_JSON_BYTES); a file that grows while being read is still bounded."""
    limit = MAX_JSON_BYTES if max_bytes is None else max_bytes
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise DecodeError([("$", f"document of {size} bytes exceeds the size limit of {limit} bytes")],
                              os.fspath(path))
        return f.read(limit + 1)


def dumps(model: BaseModel) -> str:
    """Encode a model as torch-compatible JSON: every field, nulls for unset optionals,
    enums as ints, single-key unions, non-finite floats as "Infinity"/"-Infinity"/"NaN"."""
    return model.model_dump_json()


def dump(model: BaseModel, path: str | os.PathLike[str]) -> None:
    """Write `dumps(model)` to a file (UTF-8)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(dumps(model))
