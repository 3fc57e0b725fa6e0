"""The decode decision every input format ends in (JSON text in `externspec.wire`, a Thrift tree in
`externspec.thrift`, the upgraders' output): which validation runs, with unknown keys refused or
ignored, and what a failure means given the document's version (docs/versioning.md).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import DecodeError, VersionError, problem
from . import upgrade, version
from .errors import decode_error, decode_errors
from .limits import MAX_DECODE_ERRORS

M = TypeVar("M", bound=BaseModel)


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


def validate_json(type: type[M], data: str | bytes | bytearray, extra: Literal["forbid"] | None) -> M:
    """pydantic's own validation of JSON text, as `BaseModel.model_validate_json` does it: the
    generated models' `model_validate_json` is `loads` itself, so the wire calls their validator."""
    model: M = type.__pydantic_validator__.validate_json(data, extra=extra)
    return model


def validated(type: type[M], validate: Callable[[Literal["forbid"] | None], M], extra: Literal["forbid"] | None,
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


def json_version(data: str | bytes | bytearray) -> Any:
    """The top-level `schema_version` of JSON text, as `json.loads` would give it (None when absent);
    a ValidationError when the text is not a JSON object."""
    return _TopLevelVersion.model_validate_json(data).schema_version


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
            return validated(type, validate, None, source)
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
            model = validate_json(type, json.dumps(upgraded), None if lenient else "forbid")
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
