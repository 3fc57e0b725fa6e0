"""JSON in and out of the generated models, with the wire rules of docs/wire-format.md.

* `loads`/`load` validate in one pass in pydantic-core (Rust) with the garbage collector paused:
  the models are acyclic trees, and collections triggered by millions of new objects otherwise
  cost most of the decode time.
* Errors become `DecodeError`s with JSON paths; pydantic's own exceptions never escape.
* Unknown keys: ignored in torch-written (unversioned) documents, as torch does; rejected with
  `strict=True` everywhere; in versioned documents see `externspec.wire.version`.
* A versioned document of an older major goes through the registered upgraders
  (`externspec.wire.upgrade`) and is then validated like any other; the fast path never pays for it.
* Hostile input is bounded before it costs anything (SECURITY.md): a document larger than
  `MAX_JSON_BYTES` is a `DecodeError` before parsing (`load` checks the file size before reading);
  a value inside more than `MAX_JSON_DEPTH` containers (the top-level value is inside none; a
  scalar counts as an empty container does) is a `DecodeError` from the parser itself, never a
  RecursionError. Both are per-call keywords
  (`max_bytes`, `max_depth`) and process defaults (assign `externspec.wire.MAX_JSON_BYTES`).
  200 is pydantic-core's own recursion limit, so `max_depth` can only go lower; a lower limit is
  checked by a pre-scan of the brackets that only calls which ask for it pay.
"""

from __future__ import annotations

import builtins
import enum
import functools
import gc
import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError

from .._modelbase import install_json_loads
from ..errors import DecodeError, ErrorDetail, VersionError, problem
from . import upgrade, version

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


@functools.cache
def _field_types(model: type[BaseModel]) -> dict[str, Any]:
    """A model's field annotations with forward references resolved (a model defined before a type
    it names keeps a ForwardRef in `model_fields` until something rebuilds it)."""
    return get_type_hints(model)


def json_path(model: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    """Render a pydantic error location as a JSON path, walking the model types.

    Field names become `.name`, list indices `[3]`, map keys `["key"]`.
    """
    return _walk(model, loc)[0]


def _walk(model: type[BaseModel], loc: tuple[int | str, ...]) -> tuple[str, Any]:
    """(JSON path of `loc`, the type found there, None where the walk loses it)."""
    out = "$"
    tp: Any = model
    for part in loc:
        origin = get_origin(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel) and isinstance(part, str):
            out += f".{part}"
            tp = _field_types(tp).get(part) if part in tp.model_fields else None
            tp = None if tp is None else _unwrap(tp)
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
    return out, tp


# externspec's own sentences for pydantic's error types (its `msg` text is never used for these,
# so a pydantic release cannot change them); the C++ decoder writes the same words.
_NON_FINITE = 'expected `float`: a bare NaN or Infinity literal is not JSON; write "NaN", "Infinity" or "-Infinity"'
_INT_RANGE = "integer {input} out of range (input should be {bound})"
_ENUM = "invalid enum value {input!r}: input should be {allowed}"


def _allowed(values: list[int]) -> str:
    """`0, 1 or 5`: an enum's values as the enum messages list them."""
    text = [str(v) for v in values]
    return text[0] if len(text) == 1 else f"{', '.join(text[:-1])} or {text[-1]}"


# The kind of each pydantic error type the models raise (the union check's own types included).
_KINDS = {
    **dict.fromkeys(_EXPECTED, "type"),
    "missing": "missing",
    "extra_forbidden": "unknown_key",
    "enum": "enum",
    "less_than_equal": "int_range",
    "greater_than_equal": "int_range",
    "union_members": "union",
    "union_null_member": "union",
}

# pydantic reports a JSON parse failure as one error type, `json_invalid`, whose only detail is the
# description its parser (jiter) writes; jiter's descriptions are fixed strings, so its error is told
# apart here, at the one place a parser's verdict enters externspec, from jiter's own words.
_JITER_LIMIT = "recursion limit exceeded"
_JITER_ENCODING = ("invalid unicode code point", "lone leading surrogate", "unexpected end of hex escape")


def _is_enum(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, enum.IntEnum)


def _jiter_error(err: Any) -> str:
    """The parser's own description of a `json_invalid` error (`EOF while parsing ... at line 1 column 3`)."""
    return str((err.get("ctx") or {}).get("error", ""))


def _kind(err: Any, tp: Any = None) -> str:
    """The ERROR_KINDS kind of one pydantic error (at a value of type `tp`, when known)."""
    if err["type"] == "int_parsing_size":  # an integer beyond int64: names no enum member, fits no field
        return "enum" if _is_enum(tp) else "int_range"
    if err["type"] == "json_invalid":
        jiter = _jiter_error(err)
        if jiter.startswith(_JITER_LIMIT):
            return "limit"
        return "encoding" if jiter.startswith(_JITER_ENCODING) else "syntax"
    return _KINDS.get(err["type"], "type")


def _message(err: Any, tp: Any = None) -> str:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    got = _JSON_TYPE_NAMES.get(type(err.get("input")), type(err.get("input")).__name__)
    if kind == "f64_type" and isinstance(err.get("input"), float):
        return _NON_FINITE
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}, got `{got}`"
    if kind == "missing":
        return "missing required field"
    if kind == "extra_forbidden":
        return "unknown key"
    if kind in ("enum", "int_parsing_size") and _is_enum(tp):
        return _ENUM.format(input=err.get("input"), allowed=_allowed([m.value for m in tp]))
    if kind == "less_than_equal" and "le" in ctx:
        return _INT_RANGE.format(input=err.get("input"), bound=f"less than or equal to {ctx['le']}")
    if kind == "greater_than_equal" and "ge" in ctx:
        return _INT_RANGE.format(input=err.get("input"), bound=f"greater than or equal to {ctx['ge']}")
    if kind == "json_invalid":  # the JSON parser's own description of the syntax error
        jiter = _jiter_error(err)
        if _kind(err) == "limit":  # in externspec's words, with jiter's location (`at line 1 column 202`)
            return f"nesting deeper than {MAX_JSON_DEPTH} levels{jiter.removeprefix(_JITER_LIMIT)}"
        return f"Invalid JSON: {jiter}"
    return str(err["msg"])


def decode_errors(model: type[BaseModel], exc: ValidationError) -> list[ErrorDetail]:
    """The problems of a pydantic ValidationError, as records: the first MAX_DECODE_ERRORS (a
    document with more is `decode_error(...).truncated`)."""
    out = []
    for err in exc.errors(include_url=False)[:MAX_DECODE_ERRORS]:
        loc = tuple(err["loc"])
        if err["type"] in ("missing", "extra_forbidden") and loc:
            # Name the key in the message and point at the object that lacks or has it.
            key = str(loc[-1])
            out.append(problem(_kind(err), json_path(model, loc[:-1]), f"{_message(err)} `{key}`", key))
        else:
            path, tp = _walk(model, loc)
            out.append(problem(_kind(err, tp), path, _message(err, tp)))
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
    """Raise `DecodeError` if `data` is larger than `max_bytes` or holds a value inside more than
    `max_depth` containers (None: the defaults, MAX_JSON_BYTES and MAX_JSON_DEPTH). Cheap at the
    defaults: a length comparison; the parser enforces 200 levels."""
    limit = MAX_JSON_BYTES if max_bytes is None else max_bytes
    # A str is at most 4 UTF-8 bytes a character: measure exactly only near the limit.
    if (len(data) > limit or (isinstance(data, str) and len(data) * 4 > limit
                              and _utf8_size(data) > limit)):
        raise DecodeError([problem("limit", "$", f"document of {_utf8_size(data)} bytes exceeds the size limit "
                                                  f"of {limit} bytes")], source)
    if max_depth is None or max_depth == MAX_JSON_DEPTH:
        return
    if not 0 <= max_depth <= MAX_JSON_DEPTH:
        raise ValueError(f"max_depth must be between 0 and {MAX_JSON_DEPTH} (pydantic-core's limit), got {max_depth}")
    if _nesting_exceeds(data if not isinstance(data, str) else data.encode("utf-8", "surrogatepass"), max_depth):
        raise DecodeError([problem("limit", "$", f"nesting deeper than {max_depth} levels")], source)


def _nesting_exceeds(data: bytes | bytearray, max_depth: int) -> bool:
    """True if a value lies inside more than `max_depth` containers (the top-level value inside none):
    pydantic-core's rule at its limit of 200, and both C++ backends' at any limit.

    Without a Python-level loop over the bytes: drop escapes, turn each string and each empty
    container into a placeholder scalar (a leaf either way), keep only brackets, so every pair left
    holds a value; then peel innermost pairs one level per pass. Brackets that do not pair up stop
    the peeling: the parser reports that document's syntax error."""
    text = _STRING.sub(b"0", _ESCAPE.sub(b"", data)).translate(None, b" \t\n\r")
    brackets = _INNERMOST_PAIR.sub(b"0", text).translate(None, _NOT_BRACKETS)
    for _ in range(max_depth):
        if not brackets:
            return False
        peeled = _INNERMOST_PAIR.sub(b"", brackets)
        if len(peeled) == len(brackets):
            return False
        brackets = peeled
    return bool(brackets) and _INNERMOST_PAIR.search(brackets) is not None


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
        return _validated(type, lambda extra: _pydantic_json(type, data, extra), None, source)
    return validate_document(
        type, lambda extra: _pydantic_json(type, data, extra), strict=strict, source=source,
        raw_version=lambda: policy.raw_version(
            {"schema_version": _TopLevelVersion.model_validate_json(data).schema_version}),
        tree=lambda: json.loads(data))


install_json_loads(loads)  # the generated models' model_validate_json is `loads` (externspec._modelbase)


def _pydantic_json(type: type[M], data: str | bytes | bytearray, extra: Literal["forbid"] | None) -> M:
    """pydantic's own validation of JSON text, as `BaseModel.model_validate_json` does it: the
    generated models' `model_validate_json` is `loads` itself, so the wire calls their validator."""
    model: M = type.__pydantic_validator__.validate_json(data, extra=extra)
    return model


def _surely_unversioned(data: str | bytes | bytearray) -> bool:
    """True when the text cannot hold a `schema_version` key (not even written with \\u escapes)."""
    if isinstance(data, str):
        return "schema_version" not in data and "\\u" not in data
    return b"schema_version" not in data and b"\\u" not in data


def _validated(type: type[M], validate: Callable[[Literal["forbid"] | None], M], extra: Literal["forbid"] | None,
               source: str | None) -> M:
    """One validation whose problems are the answer (no re-read), then the version check."""
    try:
        with gc_paused():
            model = validate(extra)
    except ValidationError as exc:
        raise decode_error(type, exc, source) from None
    version.policy_for(type).check(model, source)
    return model


class _TopLevelVersion(BaseModel):
    """Reads only a document's top-level `schema_version`, as `json.loads` would give it, without
    building the rest of the tree in Python."""

    model_config = ConfigDict(extra="ignore", defer_build=True)  # built when a document first needs it
    schema_version: Any = None


def validate_document(type: type[M], validate: Callable[[Literal["forbid"] | None], M], *, strict: bool,
                      source: str | None, raw_version: Callable[[], tuple[int, int] | None],
                      tree: Callable[[], dict[str, Any]]) -> M:
    """The decode decision of every input format (JSON text here, a Thrift tree in externspec.thrift),
    given `validate(extra)` over the parsed input, the document's own `raw_version()` and its
    JSON-shaped `tree()` (both asked only when needed).

    A versioned type is validated strictly first. When that fails, the document's version decides:
    an older major goes through the upgraders; an unversioned (torch-written) one is validated
    again with unknown keys ignored, as torch does, and its problems are that reading's; a versioned
    one's unknown keys may be a VersionError (a newer minor's). `strict` refuses unknown keys
    everywhere and never re-reads.
    """
    policy = version.policy_for(type)
    extra: Literal["forbid"] | None = "forbid" if (strict or policy.forbid_unknown) else None
    try:
        with gc_paused():
            model = validate(extra)
    except ValidationError as exc:
        if not policy.forbid_unknown:
            raise decode_error(type, exc, source) from None
        try:
            doc_version = raw_version()
        except ValidationError:  # not JSON, or not an object: the first pass said what is wrong
            raise decode_error(type, exc, source) from None
        if policy.needs_upgrade(doc_version, source):
            return _load_upgraded(tree(), type, policy, doc_version, strict, source)
        if strict:
            raise decode_error(type, exc, source) from None
        if doc_version is None:  # torch-written: unknown keys ignored, its problems are that reading's
            return _validated(type, validate, None, source)
        error = decode_error(type, exc, source)
        policy.check_raw(doc_version, error.errors(), source)
        raise error from None
    doc_version = policy.model_version(model)
    if policy.needs_upgrade(doc_version, source):
        return _load_upgraded(tree(), type, policy, doc_version, strict, source)
    policy.check(model, source)
    return model


def _load_upgraded(raw: dict[str, Any], type: type[M], policy: version.Policy, doc_version: tuple[int, int] | None,
                   strict: bool, source: str | None) -> M:
    """Run the upgraders over an older-major document, then validate the result as the reader's
    own version (unknown keys still ignored in a torch-written document, as torch does)."""
    start = doc_version or version.BASELINE_VERSION
    upgraded = upgrade.upgrade(raw, type.__name__, start, policy.reader[0], copy=False, source=source)
    lenient = doc_version is None and not strict  # torch-written: unknown keys ignored, as torch does
    try:
        with gc_paused():
            model = _pydantic_json(type, json.dumps(upgraded), None if lenient else "forbid")
    except ValidationError as exc:
        how = f"after upgrading schema {start[0]}.{start[1]} to {policy.reader[0]}.0"
        errors = [problem(e["kind"], e["path"], f"{e['message']} ({how})", e["key"]) for e in decode_errors(type, exc)]
        truncated = exc.error_count() > MAX_DECODE_ERRORS
        unknown = next((e for e in errors if e["kind"] == "unknown_key"), None)
        if unknown is not None and not strict:
            raise VersionError(f"{unknown['message']}: the document carries a field the upgraders do not know",
                               path=unknown["path"], key=unknown["key"], source=source) from None
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
            raise DecodeError([problem("limit", "$", f"document of {size} bytes exceeds the size limit of "
                                                      f"{limit} bytes")], os.fspath(path))
        return f.read(limit + 1)


_JSON_OBJECT_START = re.compile(r"[ \t\n\r]*\{")
SPEC_FORMS = ("a model object, a path to its JSON file (str or os.PathLike), or its JSON text (a str that starts "
              "with `{`, or bytes)")


def model_or_document(spec: Any, type: type[M]) -> tuple[M | str | bytes, str | None]:
    """The ways a caller passes a document, told apart: a `type` instance (returned as is), JSON text
    (a str whose first non-blank character is `{`: a spec is a JSON object, and no sane path starts
    so; or bytes), or a path (str or os.PathLike, read by `read_bounded`). Returns the model or the
    document, and the path as the source of error messages. Anything else is a TypeError naming
    what is accepted."""
    if isinstance(spec, type):
        return spec, None
    if isinstance(spec, (bytes, bytearray, memoryview)):
        return bytes(spec), None
    if isinstance(spec, str) and _JSON_OBJECT_START.match(spec):
        return spec, None
    if isinstance(spec, (str, os.PathLike)):
        return read_bounded(spec), os.fspath(spec)
    forms = SPEC_FORMS.replace("a model object", type.__name__)
    raise TypeError(f"expected {forms}, got {builtins.type(spec).__name__}")


def dumps(model: BaseModel) -> str:
    """Encode a model as torch-compatible JSON: every field, nulls for unset optionals,
    enums as ints, single-key unions, non-finite floats as "Infinity"/"-Infinity"/"NaN"."""
    return model.model_dump_json()


def dump(model: BaseModel, path: str | os.PathLike[str]) -> None:
    """Write `dumps(model)` to a file (UTF-8)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(dumps(model))
