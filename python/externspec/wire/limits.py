"""The hostile-input limits of every document reader (SECURITY.md): size and nesting.

`MAX_JSON_BYTES` is a process default that callers assign (`externspec.wire.MAX_JSON_BYTES = n`:
the face forwards the assignment here); every reader, the JSON and Thrift decoders, `aoti`'s package
reader and the command line, reads it at call time through `max_json_bytes`, never copies it.
`MAX_JSON_DEPTH` and `MAX_DECODE_ERRORS` are constants (pydantic-core's parser limit, and the C++
decoder's twin of the error cap). The three defaults are one table the C++ decoder reads too
(include/externspec/wire/limits.def), where a `-DEXTERNSPEC_MAX_JSON_*` still overrides them.

A document larger than the size limit is a `DecodeError` before parsing (`read_bounded` checks the
file size before reading); a value inside more than `MAX_JSON_DEPTH` containers (the top-level value
is inside none; a scalar counts as an empty container does) is a `DecodeError` from the parser itself,
never a RecursionError. 200 is pydantic-core's own recursion limit, so `max_depth` can only go lower;
a lower limit is checked by a pre-scan of the brackets that only calls which ask for it pay.
"""

from __future__ import annotations

import dataclasses
import os
import re

from .._def_file import DEF_DIR, TORCH_DEF_DIR, entries
from ..errors import DecodeError, problem
from ..messages import message

# The decoder's defaults, from the table both languages read (wire/limits.def; C++: externspec::NAME).
DECODER_LIMITS_FILE = DEF_DIR / "wire" / "limits.def"
_DECODER = {fields[0]: int(fields[1]) for _, macro, fields in entries(DECODER_LIMITS_FILE)
            if macro == "ES_DECODER_LIMIT"}
MAX_JSON_DEPTH: int = _DECODER["MAX_JSON_DEPTH"]  # pydantic-core's parser limit: the most `max_depth` can be
MAX_JSON_BYTES: int = _DECODER["MAX_JSON_BYTES"]  # default size limit (UTF-8 bytes of the JSON text)
MAX_DECODE_ERRORS: int = _DECODER["MAX_DECODE_ERRORS"]  # the most problems a failing document reports

# The default limits of a package load, from the table both languages read (limits.def).
LIMITS_FILE = TORCH_DEF_DIR / "limits.def"
_DEFAULTS = {fields[0]: int(fields[1]) for _, macro, fields in entries(LIMITS_FILE) if macro == "ES_LIMIT_DEFAULT"}
# The bounds no option changes (limits.def's ES_LIMIT_FIXED; C++ reads the same lines).
_FIXED = {fields[0]: int(fields[1]) for _, macro, fields in entries(LIMITS_FILE) if macro == "ES_LIMIT_FIXED"}
SMALL_JSON_BYTES: int = _FIXED["small_json_bytes"]  # a package's `*.wrapper_metadata.json`
EXTRACTED_BYTES_PER_PACKAGE_BYTE: int = _FIXED["extracted_bytes_per_package_byte"]  # max_extracted_bytes 0
ELF_SECTIONS: int = _FIXED["elf_sections"]  # a model library's section headers read
ELF_TABLE_BYTES: int = _FIXED["elf_table_bytes"]  # each of its dynamic symbol and string tables


def extracted_budget(given: int, package_bytes: int) -> int:
    """What a load may write for a package of `package_bytes`: `given` (Limits.max_extracted_bytes),
    or, when 0, EXTRACTED_BYTES_PER_PACKAGE_BYTE times the package's size (the runner's rule)."""
    return given or EXTRACTED_BYTES_PER_PACKAGE_BYTE * package_bytes


def max_json_bytes(given: int | None = None) -> int:
    """The size limit of one read: `given`, else the process default as it is now."""
    return MAX_JSON_BYTES if given is None else given


@dataclasses.dataclass(frozen=True)
class Limits:
    """What a load may read, keep and write, in bytes: the C++ `externspec::Limits`
    (include/externspec/torch/limits.h), the same names, the defaults from one table (limits.def).
    `es.cpp` passes these to C++ at each load, `current()` (the process defaults as they are then)
    unless a call gives its own."""

    max_json_bytes: int = MAX_JSON_BYTES  # one JSON document (the process default as the module is read)
    max_source_bytes: int = _DEFAULTS["max_source_bytes"]  # a package's `*.wrapper.cpp`, read for its records
    max_extracted_bytes: int = _DEFAULTS["max_extracted_bytes"]  # written (from bytes: held); 0: 16x the package
    max_custom_object_bytes: int = _DEFAULTS["max_custom_object_bytes"]  # each torchbind object read

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 64:
                raise ValueError(f"Limits.{f.name} must be an int from 0 to 2**64 - 1, got {value!r}")

    @classmethod
    def current(cls, **given: int | None) -> Limits:
        """The process defaults as they are now (`MAX_JSON_BYTES` as assigned), with the limits a
        call gives (None: the default)."""
        return cls(**{"max_json_bytes": MAX_JSON_BYTES, **{k: v for k, v in given.items() if v is not None}})


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
    limit = max_json_bytes(max_bytes)
    # A str is at most 4 UTF-8 bytes a character: measure exactly only near the limit.
    if (len(data) > limit or (isinstance(data, str) and len(data) * 4 > limit
                              and _utf8_size(data) > limit)):
        raise DecodeError([problem("limit", "$", message("DOCUMENT_TOO_LARGE", size=_utf8_size(data), limit=limit))],
                          source)
    if max_depth is None or max_depth == MAX_JSON_DEPTH:
        return
    if not 0 <= max_depth <= MAX_JSON_DEPTH:
        raise ValueError(f"max_depth must be between 0 and {MAX_JSON_DEPTH} (pydantic-core's limit), got {max_depth}")
    if _nesting_exceeds(data if not isinstance(data, str) else data.encode("utf-8", "surrogatepass"), max_depth):
        raise DecodeError([problem("limit", "$", message("NESTING_TOO_DEEP", depth=max_depth))], source)


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


def read_bounded(path: str | os.PathLike[str], max_bytes: int | None = None) -> bytes:
    """The bytes of a document file, refused (`DecodeError`) before reading when it is larger than
    `max_bytes` (default MAX_JSON_BYTES); a file that grows while being read is still bounded."""
    limit = max_json_bytes(max_bytes)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise DecodeError([problem("limit", "$", message("DOCUMENT_TOO_LARGE", size=size, limit=limit))],
                              os.fspath(path))
        return f.read(limit + 1)
