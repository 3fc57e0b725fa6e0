"""JSON in and out of the generated models, with the wire rules of docs/wire-format.md: the face of
the wire, over its parts (as msgspec's `json` module is over its engine):

* `limits.py`: the size and nesting limits (SECURITY.md); `MAX_JSON_BYTES` is a process default
  assigned here (`externspec.wire.MAX_JSON_BYTES = n`) and read at call time by every reader;
* `errors.py`: pydantic's errors as externspec's records, with JSON paths;
* `decision.py`: the decode decision every input format ends in (JSON here, Thrift trees, upgrades);
* `version.py`, `upgrade.py`: the version policy and the upgraders.

`loads`/`load` validate in one pass in pydantic-core (Rust) with the garbage collector paused (the
models are acyclic trees, and collections triggered by millions of new objects otherwise cost most
of the decode time). Errors are `DecodeError`s with JSON paths; pydantic's own exceptions never
escape. Unknown keys: ignored in torch-written (unversioned) documents, as torch does; rejected with
`strict=True` everywhere; in versioned documents see `externspec.wire.version`. A versioned document
of an older major goes through the registered upgraders and is then validated like any other; the
fast path never pays for it. The limits are per-call keywords (`max_bytes`, `max_depth`) and process
defaults.
"""

from __future__ import annotations

import builtins
import json
import os
import re
import sys
import types
import zipfile
from typing import Any, TypeVar

from pydantic import BaseModel

from .. import file_kind
from .._modelbase import install_json_loads
from ..errors import PackageError
from . import decision, limits, version
from .limits import MAX_DECODE_ERRORS, MAX_JSON_DEPTH, Limits

__all__ = ["MAX_DECODE_ERRORS", "MAX_JSON_BYTES", "MAX_JSON_DEPTH", "SPEC_FORMS", "Limits", "dump", "dumps", "load",
           "loads", "model_or_document"]

M = TypeVar("M", bound=BaseModel)

MAX_JSON_BYTES: int
"""The default size limit (UTF-8 bytes of a document; 256 MiB): assign it to change every reader's
default at once, the JSON and Thrift decoders, `externspec.aoti` and the command line. It lives in
`limits.py`; this module forwards reads and assignments there (`_Wire`)."""


class _Wire(types.ModuleType):
    """The module `externspec.wire`, whose `MAX_JSON_BYTES` is `limits.MAX_JSON_BYTES`: a name a
    caller assigns on the face reaches the readers, which read it in `limits` at call time (as
    torch.backends' modules forward their flags)."""

    @property
    def MAX_JSON_BYTES(self) -> int:
        return limits.MAX_JSON_BYTES

    @MAX_JSON_BYTES.setter
    def MAX_JSON_BYTES(self, value: int) -> None:
        limits.MAX_JSON_BYTES = value


sys.modules[__name__].__class__ = _Wire


def loads(data: str | bytes | bytearray, type: type[M], *, strict: bool = False, source: str | None = None,
          max_bytes: int | None = None, max_depth: int | None = None) -> M:
    """Decode JSON text into `type` (a generated model class).

    Raises `DecodeError` (with the JSON path of each problem) or `VersionError`.
    `source` names the input in error messages (a file path). `max_bytes` and `max_depth` lower or
    raise the size limit and lower the nesting limit for this call (defaults: MAX_JSON_BYTES, MAX_JSON_DEPTH).
    """
    limits.check_limits(data, max_bytes, max_depth, source)
    policy = version.policy_for(type)
    if policy.forbid_unknown and not strict and not policy.needs_upgrade(None) and _surely_unversioned(data):
        # Torch-written: one lenient parse, unknown keys ignored as torch does (the forward-compatible
        # case costs no strict attempt, no error list and no second parse).
        return decision.validated(type, lambda extra: decision.validate_json(type, data, extra), None, source)
    return decision.validate_document(
        type, lambda extra: decision.validate_json(type, data, extra), strict=strict, source=source,
        raw_version=lambda: policy.raw_version({"schema_version": decision.json_version(data)}),
        tree=lambda: json.loads(data))


install_json_loads(loads)  # the generated models' model_validate_json is `loads` (externspec._modelbase)


def _surely_unversioned(data: str | bytes | bytearray) -> bool:
    """True when the text cannot hold a `schema_version` key (not even written with \\u escapes)."""
    if isinstance(data, str):
        return "schema_version" not in data and "\\u" not in data
    return b"schema_version" not in data and b"\\u" not in data


def load(path: str | os.PathLike[str], type: type[M], *, strict: bool = False, max_bytes: int | None = None,
         max_depth: int | None = None) -> M:
    """Decode a JSON file into `type`; error messages start with the file path.

    A file larger than the size limit is refused before it is read."""
    limit = limits.max_json_bytes(max_bytes)
    data = limits.read_bounded(path, limit)
    return loads(data, type, strict=strict, source=os.fspath(path), max_bytes=limit, max_depth=max_depth)


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
        _refuse_archive(spec)
        return limits.read_bounded(spec), os.fspath(spec)
    forms = SPEC_FORMS.replace("a model object", type.__name__)
    raise TypeError(f"expected {forms}, got {builtins.type(spec).__name__}")


def _refuse_archive(path: str | os.PathLike[str]) -> None:
    """A spec is JSON: a zip archive given as one (a `.pt2`, most often) is a PackageError saying what
    it is and where it goes, in both executors' words (es.cpp.ProxyExecutor reads paths here too),
    rather than `Invalid JSON` at its first byte."""

    try:
        with open(path, "rb") as f:
            if f.read(4) not in (b"PK\x03\x04", b"PK\x05\x06"):
                return
            f.seek(0)
            kind = file_kind.archive_kind(zipfile.ZipFile(f).namelist())
    except (OSError, zipfile.BadZipFile):
        return  # read_bounded says why it cannot be read; a damaged zip is not JSON either
    what = file_kind.describe(kind) if kind != "aoti_package" else file_kind.KINDS[kind][0]
    raise PackageError(f"{what}, not an extern-kernel spec (JSON): {file_kind.SPEC_OF_PACKAGE}",
                       source=os.fspath(path), kind=kind)


def dumps(model: BaseModel) -> str:
    """Encode a model as torch-compatible JSON: every field, nulls for unset optionals,
    enums as ints, single-key unions, non-finite floats as "Infinity"/"-Infinity"/"NaN"."""
    return model.model_dump_json()


def dump(model: BaseModel, path: str | os.PathLike[str]) -> None:
    """Write `dumps(model)` to a file (UTF-8)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(dumps(model))
