"""pydantic's errors as externspec's records (docs/wire-format.md, "Errors"): each problem of a
failed validation becomes a `problem` record (kind, JSON path, message, key) in externspec's own
words, so a pydantic release changes no kind and no message. Every input format's validation ends
here (JSON text, a Thrift tree, an upgraded document).
"""

from __future__ import annotations

import enum
import functools
import json
from typing import Any, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ValidationError

from ..errors import DecodeError, ErrorDetail, problem
from ..messages import message
from .limits import MAX_DECODE_ERRORS, MAX_JSON_DEPTH

_JSON_TYPE_NAMES = {str: "str", int: "int", float: "float", bool: "bool", type(None): "null",
                    dict: "object", list: "array"}
_EXPECTED = {
    "int_type": "int", "string_type": "str", "bool_type": "bool", "f64_type": "float",
    "list_type": "array", "dict_type": "object", "model_type": "object",
    "model_attributes_type": "object", "int_from_float": "int",
}


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
# so a pydantic release cannot change them); the C++ decoder writes the same words (messages.def's,
# where both render them).
_NON_FINITE = 'expected `float`: a bare NaN or Infinity literal is not JSON; write "NaN", "Infinity" or "-Infinity"'


def _allowed(values: list[int]) -> str:
    """`0, 1 or 5`: an enum's values as the enum messages list them."""
    text = [str(v) for v in values]
    return text[0] if len(text) == 1 else f"{', '.join(text[:-1])} or {text[-1]}"


# The messages of the problems that name a key (the key the object lacks or has).
_KEYED = {"missing": "MISSING_FIELD", "extra_forbidden": "UNKNOWN_KEY"}

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
        return message("WRONG_TYPE", expected=_EXPECTED[kind], got=got)
    if kind in _KEYED and err.get("loc"):  # the key the object lacks or has
        return message(_KEYED[kind], key=err["loc"][-1])
    if kind in ("enum", "int_parsing_size") and _is_enum(tp):
        return message("ENUM_VALUE_INVALID", input=repr(err.get("input")), allowed=_allowed([m.value for m in tp]))
    if kind == "less_than_equal" and "le" in ctx:
        return message("INT_OUT_OF_RANGE", input=err.get("input"), bound=message("INT_AT_MOST", bound=ctx["le"]))
    if kind == "greater_than_equal" and "ge" in ctx:
        return message("INT_OUT_OF_RANGE", input=err.get("input"), bound=message("INT_AT_LEAST", bound=ctx["ge"]))
    if kind == "json_invalid":  # the JSON parser's own description of the syntax error
        jiter = _jiter_error(err)
        if _kind(err) == "limit":  # in externspec's words, with jiter's location (`at line 1 column 202`)
            return message("NESTING_TOO_DEEP", depth=MAX_JSON_DEPTH) + jiter.removeprefix(_JITER_LIMIT)
        return f"Invalid JSON: {jiter}"
    return str(err["msg"])


def decode_errors(model: type[BaseModel], exc: ValidationError) -> list[ErrorDetail]:
    """The problems of a pydantic ValidationError, as records: the first MAX_DECODE_ERRORS (a
    document with more is `decode_error(...).truncated`)."""
    out = []
    for err in exc.errors(include_url=False)[:MAX_DECODE_ERRORS]:
        loc = tuple(err["loc"])
        if err["type"] in _KEYED and loc:
            # Name the key in the message and point at the object that lacks or has it.
            key = str(loc[-1])
            out.append(problem(_kind(err), json_path(model, loc[:-1]), _message(err), key))
        else:
            path, tp = _walk(model, loc)
            out.append(problem(_kind(err, tp), path, _message(err, tp)))
    return out


def decode_error(model: type[BaseModel], exc: ValidationError, source: str | None) -> DecodeError:
    """The DecodeError of a failed validation, its list capped at MAX_DECODE_ERRORS."""
    return DecodeError(decode_errors(model, exc), source, truncated=exc.error_count() > MAX_DECODE_ERRORS)
