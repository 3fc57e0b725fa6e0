"""Reading AOTInductor packages (.pt2) written by torch: the extern-kernel file and the calls the
generated wrapper makes, so an externspec executor can be checked against exactly what torch passes.

A package is a zip; `*/data/aotinductor/model/<hash>.wrapper.json` is the extern-kernel file and
`<hash>.wrapper.cpp` the generated wrapper, whose `aoti_torch_proxy_executor_call_function(...)`
lines carry the two flat arrays (literal ints for static shapes, tensor handle names).

Both members are read bounded (`read_member`, which the command line uses for every archive member
too), as the C++ runner reads them: the size the zip's directory records is checked against a limit
before anything is inflated, the read stops at that size, and the CRC is verified; a member that
lies about its size is a `PackageError` naming it.
"""

from __future__ import annotations

import fnmatch
import io
import os
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

from pydantic import BaseModel

from . import file_kind, package_layout
from ._generated.models import ExportedProgram, ExternKernelNodes, PayloadConfig
from .errors import ExternSpecError, PackageError
from .messages import message
from .wire import limits, loads

# The largest wrapper source read: `Limits.max_source_bytes`'s default (es.cpp.AOTIRunner's too).
MAX_SOURCE_BYTES = limits.Limits().max_source_bytes
# The setting a schema member's size is refused by when the caller passed no limit of their own.
DEFAULT_LIMIT_NAME = "externspec.wire.MAX_JSON_BYTES"

# Where the schema documents sit in a package (fnmatch over the member name, `*` crossing folders):
# the one table of every Python reader (`read_package`, the command line's validate, inspect,
# upgrade and check-spec), from the package layout both languages read (package_layout.py). The
# wrapper source is the extern-kernel file's sibling (`wrapper_source`).
EXTERN_KERNELS = package_layout.model_member("spec")
_SCHEMA_TYPES: dict[str, type[BaseModel]] = {"ExportedProgram": ExportedProgram, "PayloadConfig": PayloadConfig}
SCHEMA_MEMBERS: tuple[tuple[str, type[BaseModel]], ...] = (
    (EXTERN_KERNELS, ExternKernelNodes),
    *((pattern, _SCHEMA_TYPES[type_name]) for pattern, type_name in package_layout.DOCUMENTS),
)


def member_type(name: str) -> type[BaseModel] | None:
    """The document type of a package member, from its place in the archive (None: not a schema document)."""
    return next((t for pattern, t in SCHEMA_MEMBERS if fnmatch.fnmatchcase(name, pattern)), None)


def wrapper_source(spec_member: str) -> str:
    """The generated wrapper source beside an extern-kernel file (`<stem>.wrapper.cpp`)."""
    return package_layout.sibling(spec_member, "source")

_CALL_START = "aoti_torch_proxy_executor_call_function("
# Matched anchored, on one statement at a time (from _CALL_START to the next `;`): every character
# of the source is read by one attempt only, so hostile text is read in linear time (a search over
# the whole text took 53 s for 0.68 MB of unterminated calls).
_CALL = re.compile(
    r"aoti_torch_proxy_executor_call_function\(\s*proxy_executor,\s*(\d+),\s*(\d+),\s*"
    r"std::array<int64_t,\s*\d+>\{([^}]*)\}\.data\(\),\s*(\d+),\s*"
    r"std::array<AtenTensorHandle,\s*\d+>\{([^}]*)\}\.data\(\)\s*\)"
)
_OUTPUT = re.compile(r"output_handles\[(\d+)\]\s*=\s*(\w+)\.release\(\)")
_INPUT = re.compile(r"auto\s+(\w+)\s*=\s*std::move\(inputs\[(\d+)\]\)")
_INT = re.compile(r"-?\d+L?\Z")


@dataclass(frozen=True)
class WrapperCall:
    """One `aoti_torch_proxy_executor_call_function` call of a generated wrapper."""

    index: int
    int_args: tuple[int, ...]
    tensor_names: tuple[str, ...]


@dataclass(frozen=True)
class ExternPackage:
    """The extern-kernel side of a compiled package."""

    json_text: str
    nodes: ExternKernelNodes
    calls: tuple[WrapperCall, ...]
    input_names: tuple[str, ...]  # wrapper variable of model input i
    output_names: tuple[str, ...]  # wrapper variable of model output i
    call_lengths: tuple[tuple[int, int, int], ...]  # what each call states: ProxyExecutor's `call_lengths`


def _calls(cpp: str) -> Iterator[re.Match[str]]:
    """The proxy-executor calls of a wrapper source, each matched within its own statement."""
    start = cpp.find(_CALL_START)
    while start >= 0:
        end = cpp.find(";", start)
        end = len(cpp) if end < 0 else end
        m = _CALL.match(cpp, start, end)
        if m:
            yield m
        start = cpp.find(_CALL_START, max(end, start + 1))


def wrapper_call_lengths(cpp: str) -> tuple[tuple[int, int, int], ...]:
    """The (node, `num_ints`, `num_tensors`) each proxy-executor call of a wrapper states (dynamic
    shapes too: the lengths are literals), in wrapper order: the package's evidence of its call
    layout, which the executors' `call_lengths` decide "auto" from (docs/torch-compat.md, "The call
    layout"). The C++ twin is cpp/csrc/aoti_package/wrapper_calls.cpp. Plain tuples: reading a
    package imports nothing of the executors."""
    return tuple((int(m[1]), int(m[2]), int(m[4])) for m in _calls(cpp))


def parse_wrapper_calls(cpp: str, source: str = "wrapper.cpp") -> list[WrapperCall]:
    """Every proxy-executor call of a generated wrapper, with its literal arrays.

    Symbolic ints (dynamic shapes, e.g. `8L + s77`) are reported as errors: only static-shape
    wrappers can be replayed outside the compiled model."""
    calls = []
    for m in _calls(cpp):
        index, n_ints, ints_text, n_tensors, tensors_text = m.groups()
        ints = [t.strip() for t in ints_text.split(",") if t.strip()]
        bad = [t for t in ints if not _INT.match(t)]
        if bad:
            raise ExternSpecError(
                f"{source}: extern call {index} passes symbolic ints {bad}; only static shapes replay")
        names = tuple(t.strip() for t in tensors_text.split(",") if t.strip())
        values = tuple(int(t.rstrip("L")) for t in ints)
        if len(values) != int(n_ints) or len(names) != int(n_tensors):
            raise ExternSpecError(f"{source}: extern call {index}: array lengths disagree with the counts passed")
        calls.append(WrapperCall(int(index), values, names))
    return calls


def read_package(path: str | os.PathLike[str] | bytes | bytearray | memoryview, *, max_spec_bytes: int | None = None,
                 max_source_bytes: int = MAX_SOURCE_BYTES) -> ExternPackage:
    """Extract the extern-kernel file and wrapper calls of an AOTInductor package.

    Reads two members, each at most its limit (`max_spec_bytes`, default `externspec.wire.MAX_JSON_BYTES`
    as it is at the call, for the `*.wrapper.json` and its decode; `max_source_bytes` for the
    `*.wrapper.cpp`), checked from the zip's directory before inflating. Raises `PackageError` naming
    the package and the member when the archive is not a zip, a member is missing, repeated, over its
    limit, not the size or CRC its directory records, or the source is not UTF-8. The wrapper source
    is required: the calls are read from it (a package can run without it, so `es.cpp.AOTIRunner`
    loads one; `read_package` cannot replay it). `path` may be the package's bytes (from an object
    store or a database: nothing is written to disk), named `<bytes>` in messages."""
    archive: io.BytesIO | str | os.PathLike[str]
    if isinstance(path, (bytes, bytearray, memoryview)):
        label, archive = "<bytes>", io.BytesIO(path)
    else:
        label, archive = os.fspath(path), path
    spec_limit = limits.max_json_bytes(max_spec_bytes)  # the process default as it is now
    try:
        with zipfile.ZipFile(archive) as z:
            infos = z.infolist()
            kind = file_kind.archive_kind(z.namelist())
            if kind != "aoti_package":
                raise PackageError(file_kind.describe(kind), source=label, kind=kind)
            json_infos = [i for i in infos if fnmatch.fnmatchcase(i.filename, EXTERN_KERNELS)]
            json_name = _spec_member(label, infos, json_infos)
            cpp_name = wrapper_source(json_name)
            cpp_infos = [i for i in infos if i.filename == cpp_name]
            if len(cpp_infos) != 1:
                why = "is missing (the calls are read from the generated wrapper source)" if not cpp_infos \
                    else f"appears {len(cpp_infos)} times"
                raise PackageError(f"{label}: member {cpp_name!r} {why}")
            limit_name = "max_spec_bytes" if max_spec_bytes is not None else DEFAULT_LIMIT_NAME
            json_bytes = read_member(z, json_infos[0], spec_limit, f"{label}!{json_name}", limit_name=limit_name) \
                if json_infos else NO_EXTERN_CALLS
            cpp_bytes = read_member(z, cpp_infos[0], max_source_bytes, f"{label}!{cpp_name}",
                                    limit_name="max_source_bytes")
    except zipfile.BadZipFile:
        raise PackageError(file_kind.describe("not_zip"), source=label, kind="not_zip") from None
    nodes = loads(json_bytes, ExternKernelNodes, source=f"{label}!{json_name}", max_bytes=spec_limit)
    try:
        cpp = cpp_bytes.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PackageError(f"{label}!{cpp_name}: not UTF-8 at byte {e.start}") from None
    outputs = sorted((int(i), n) for i, n in _OUTPUT.findall(cpp))
    inputs = sorted((int(i), n) for n, i in _INPUT.findall(cpp))
    return ExternPackage(
        json_text=json_bytes.decode("utf-8"), nodes=nodes,
        calls=tuple(parse_wrapper_calls(cpp, f"{label}!{cpp_name}")),
        input_names=tuple(n for _, n in inputs), output_names=tuple(n for _, n in outputs),
        call_lengths=wrapper_call_lengths(cpp),
    )


# The extern-kernel file of a model without extern calls, which torch does not write (2.15's default mode).
NO_EXTERN_CALLS = b'{"nodes": []}'


def _spec_member(label: str, infos: list[zipfile.ZipInfo], json_infos: list[zipfile.ZipInfo]) -> str:
    """The extern-kernel member's name: the one there is, or, where a package's only model has none
    (it makes no extern calls), the name it would have beside the model's wrapper source."""
    if len(json_infos) == 1:
        return json_infos[0].filename
    sources = [i.filename for i in infos if fnmatch.fnmatchcase(i.filename, package_layout.model_member("source"))]
    if not json_infos and len(sources) == 1:
        return package_layout.sibling(sources[0], "spec", of="source")
    raise PackageError(f"{label}: expected one {EXTERN_KERNELS}, found {[i.filename for i in json_infos]}")


# zipfile's failures on hostile archives: a corrupt or truncated member (BadZipFile, EOFError,
# zlib.error, OSError from bz2), an encrypted one (RuntimeError), an unknown compression method
# (NotImplementedError), a bad header field (ValueError).
ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError, ValueError)
_COMPRESSIONS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, source: str, *,
                limit_name: str) -> bytes:
    """A member's bytes, or a `PackageError` naming `source` (`pkg.pt2!member`). Refused from its zip
    directory entry alone, before anything is inflated, when its recorded size is over `limit` (the
    message names the setting, `limit_name`), it is encrypted, or its compression is one zipfile
    cannot undo; the read is capped at the recorded size and must reach it, and zipfile verifies
    the CRC there."""
    out = io.BytesIO()
    copy_member(archive, info, limit, source, out, limit_name=limit_name)
    return out.getvalue()


def copy_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, source: str, out: IO[bytes], *,
                limit_name: str) -> int:
    """`read_member`'s checks and read, into the file `out` a piece at a time (a model library need
    not fit in memory); returns the bytes written."""
    if info.file_size > limit:
        raise PackageError(f"{message('MEMBER_TOO_LARGE', size=info.file_size, limit=limit)} ({limit_name})",
                           source=source)
    if info.flag_bits & 0x1:
        raise PackageError("the member is encrypted (externspec reads only unencrypted archives)", source=source)
    if info.compress_type not in _COMPRESSIONS:
        raise PackageError(f"compression method {info.compress_type} is not supported (stored, deflate, bzip2 or "
                           f"lzma)", source=source)
    written = 0
    try:
        with archive.open(info) as f:
            while written <= info.file_size and (piece := f.read(min(1 << 20, info.file_size + 1 - written))):
                out.write(piece)
                written += len(piece)
    except ZIP_ERRORS as e:
        raise PackageError(f"cannot read the archive member: {e}", source=source) from None
    if written != info.file_size:
        raise PackageError(f"{written} bytes where the zip directory records {info.file_size}", source=source)
    return written


def replay_extern_calls(package: ExternPackage, call_function: Callable[[int, Sequence[int], list[Any]], None],
                        inputs: Sequence[Any]) -> list[Any]:
    """Run a package's extern calls in wrapper order through `call_function`, with the arrays the
    wrapper passes, and return the model outputs.

    Works for models whose extern calls read only model inputs and earlier extern outputs (every
    value of the graph goes through an extern kernel); anything else is an error naming the
    buffer computed by generated code."""
    # Here, not at the top: reading a package's members (the command line's validate) needs no ABI tables.
    from .abi import return_slots

    env: dict[str, Any] = dict(zip(package.input_names, inputs, strict=True))
    for call in package.calls:
        node = package.nodes.nodes[call.index].node
        n_out = sum(return_slots(o)[1] for o in node.outputs)
        n_in = len(call.tensor_names) - n_out
        missing = [n for n in call.tensor_names[:n_in] if n not in env]
        if missing:
            raise ExternSpecError(f"extern call {call.index} reads {missing}, computed by generated code")
        tensors: list[Any] = [env[n] for n in call.tensor_names[:n_in]] + [None] * n_out
        call_function(call.index, list(call.int_args), tensors)
        env.update(zip(call.tensor_names[n_in:], tensors[n_in:], strict=True))
    missing = [n for n in package.output_names if n not in env]
    if missing:
        raise ExternSpecError(f"model outputs {missing} are computed by generated code")
    return [env[n] for n in package.output_names]
