"""JSON in and out of the generated models, with the wire rules of DESIGN.md.

* `loads`/`load` validate in one pass in pydantic-core (Rust) with the garbage collector paused:
  the models are acyclic trees, and collections triggered by millions of new objects otherwise
  cost most of the decode time.
* Errors become `DecodeError`s with JSON paths; pydantic's own exceptions never escape.
* Unknown keys: ignored in torch-written (unversioned) documents, as torch does; rejected with
  `strict=True` everywhere; in versioned documents see `externspec.version`.
* A versioned document of an older major goes through the registered upgraders
  (`externspec.upgrade`) and is then validated like any other; the fast path never pays for it.
* JSON nesting is limited to `MAX_JSON_DEPTH` levels (the limit of pydantic-core's parser); deeper
  documents are a `DecodeError`, never a RecursionError.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from . import upgrade, version
from .errors import DecodeError, VersionError

M = TypeVar("M", bound=BaseModel)

MAX_JSON_DEPTH = 200

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
    """Every problem of a pydantic ValidationError, as (JSON path, message)."""
    out = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        if err["type"] in ("missing", "extra_forbidden") and loc:
            # Name the key in the message and point at the object that lacks or has it.
            out.append((json_path(model, loc[:-1]), f"{_message(err)} `{loc[-1]}`"))
        else:
            out.append((json_path(model, loc), _message(err)))
    return out


def loads(data: str | bytes | bytearray, type: type[M], *, strict: bool = False, source: str | None = None) -> M:
    """Decode JSON text into `type` (a generated model class).

    Raises `DecodeError` (with the JSON path of each problem) or `VersionError`.
    `source` names the input in error messages (a file path).
    """
    policy = version.policy_for(type)
    extra: Literal["forbid"] | None = "forbid" if (strict or policy.forbid_unknown) else None
    try:
        with gc_paused():
            model = type.model_validate_json(data, extra=extra)
    except ValidationError as exc:
        errors = decode_errors(type, exc)
        if policy.forbid_unknown:
            return _reread(data, type, errors, policy, strict, source)
        raise DecodeError(errors, source) from None
    doc_version = policy.model_version(model)
    if policy.needs_upgrade(doc_version):
        return _load_upgraded(json.loads(data), type, policy, doc_version, strict, source)
    policy.check(model, source)
    return model


def _reread(data: str | bytes | bytearray, type: type[M], errors: list[tuple[str, str]],
            policy: version.Policy, strict: bool, source: str | None) -> M:
    """A versioned type failed strict validation: decide by the document's version."""
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError):
        raise DecodeError(errors, source) from None
    doc_version = policy.raw_version(raw)
    if isinstance(raw, dict) and policy.needs_upgrade(doc_version):
        return _load_upgraded(raw, type, policy, doc_version, strict, source)
    if strict:
        raise DecodeError(errors, source) from None
    unknown = [(path, msg) for path, msg in errors if msg.startswith("unknown key")]
    if doc_version is None and len(unknown) == len(errors):
        # Torch-written: unknown keys are ignored, as torch does.
        with gc_paused():
            try:
                model = type.model_validate_json(data)
            except ValidationError as exc:
                raise DecodeError(decode_errors(type, exc), source) from None
        policy.check(model, source)
        return model
    policy.check_raw(doc_version, unknown, source)
    raise DecodeError(errors, source) from None


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
        unknown = [(path, msg) for path, msg in errors if msg.startswith("unknown key")]
        if unknown and not strict:
            raise VersionError(f"{source + ': ' if source else ''}{unknown[0][0]}: {unknown[0][1]}: the document "
                               f"carries a field the upgraders do not know") from None
        raise DecodeError(errors, source) from None
    policy.check(model, source)
    return model


def load(path: str | os.PathLike[str], type: type[M], *, strict: bool = False) -> M:
    """Decode a JSON file into `type`; error messages start with the file path."""
    with open(path, "rb") as f:
        data = f.read()
    return loads(data, type, strict=strict, source=os.fspath(path))


def dumps(model: BaseModel) -> str:
    """Encode a model as torch-compatible JSON: every field, nulls for unset optionals,
    enums as ints, single-key unions, non-finite floats as "Infinity"/"-Infinity"/"NaN"."""
    return model.model_dump_json()


def dump(model: BaseModel, path: str | os.PathLike[str]) -> None:
    """Write `dumps(model)` to a file (UTF-8)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(dumps(model))
