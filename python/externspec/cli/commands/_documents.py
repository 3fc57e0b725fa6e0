"""Reading the files the command line accepts, and recognising which document each one holds.

A file is JSON (torch's format), a Thrift binary or compact document, or a `.pt2` archive whose
JSON members are found by their place in the archive (`externspec.aoti.SCHEMA_MEMBERS`, the table
`aoti.read_package` reads too): extern-kernel files, exported programs, weights and constants
configs. Other members (kernel metadata, weights) are not schema documents and are left alone.
"""

from __future__ import annotations

import fnmatch
import io
import json
import os
import re
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from pydantic import BaseModel

import externspec as es
from externspec import aoti, file_kind
from externspec.messages import message
from externspec.wire import limits
from externspec.wire import version as _version

if TYPE_CHECKING:
    from externspec.thrift import Protocol

# Document types a file may hold, in the order binary input is tried (the first fields differ).
DOCUMENT_TYPES: dict[str, type[BaseModel]] = {
    "ExternKernelNodes": es.ExternKernelNodes,
    "ExportedProgram": es.ExportedProgram,
    "ExternKernelNode": es.ExternKernelNode,
    "Node": es.Node,
    "PayloadConfig": es.PayloadConfig,
}

FORMATS = ("json", "binary", "compact")
EXTENSIONS = {".json": "json", ".bin": "binary", ".tbin": "binary", ".thrift-binary": "binary",
              ".compact": "compact", ".tcompact": "compact"}

class InputError(Exception):
    """A file that cannot be read as any document (missing, not JSON, unknown kind). Exit code 1.

    Data, as the library's errors: `label` names the file or archive member, `path` the JSON path
    of the problem (`$`: the document as a whole), `message` says what is wrong, `kind` what kind
    of problem (`input`, or a file kind of `externspec.file_kind.KINDS` for a file that is not what
    the command reads); `str(e)` is `label: message` (or `label: path: message` when the path is not `$`)."""

    def __init__(self, label: str, message: str, *, path: str = "$", kind: str = "input"):
        self.label = label
        self.message = message
        self.path = path
        self.kind = kind
        super().__init__(f"{label}: {message}" if path == "$" else f"{label}: {path}: {message}")


@dataclass
class Source:
    """One document to decode: where it came from, its bytes, its format and (if known) its type.

    `error` is set instead of `data` for an archive member that cannot be read (too large, encrypted,
    an unknown compression): the other members of the archive are still checked."""

    label: str  # a file path, `-` for stdin, or `archive.pt2:member/path.json`
    data: bytes
    format: str  # json | binary | compact
    type: type[BaseModel] | None = None
    error: str | None = None
    # An AOTInductor model folder without an extern-kernel file: the model makes no extern calls,
    # and the source is the empty spec that absence means (`{"nodes": []}`).
    absent: bool = False
    archive: str | None = None  # the archive and the member, for a source inside one
    member: str | None = None
    archive_data: bytes | None = None  # the archive's bytes, where it came from stdin


def format_of(path: str, override: str | None = None) -> str | None:
    """The format named by `override` or by the file extension; None if neither says."""
    if override:
        return override
    return EXTENSIONS.get(os.path.splitext(path)[1].lower())


def _limit() -> int:
    return limits.max_json_bytes()


def _too_large(size: int) -> str:
    return f"{message('DOCUMENT_TOO_LARGE', size=size, limit=_limit())} ({aoti.DEFAULT_LIMIT_NAME})"


def _read_bounded(f: IO[bytes], label: str) -> bytes:
    """At most the size limit from `f`: a file that is (or grows) larger is refused, never read whole."""
    data = f.read(_limit() + 1)
    if len(data) > _limit():
        raise InputError(label, f"{_too_large(len(data))} or more")
    return data


def read_sources(path: str, *, format: str | None = None, type_name: str | None = None) -> Iterator[Source]:
    """The documents in a file: one for a plain file (`-` is stdin), one per schema member of a .pt2
    archive. Sizes are checked before anything is read (the file size, each member's header)."""
    forced = DOCUMENT_TYPES[type_name] if type_name else None
    if path == "-":
        data = _read_bounded(sys.stdin.buffer, "<stdin>")
        if data[:4] in _ZIP_MAGIC:  # a package piped in: its members, read from memory
            for source in _archive_sources("-", io.BytesIO(data), forced):
                source.archive_data = data
                yield source
            return
        yield Source("-", data, format or _sniff(data), forced)
        return
    try:
        with open(path, "rb") as f:
            if zipfile.is_zipfile(f):
                yield from _archive_sources(path, f, forced)
                return
            if path.endswith(".pt2"):
                raise not_an_archive(path)
            size = os.fstat(f.fileno()).st_size
            if size > _limit():
                raise InputError(path, _too_large(size))
            f.seek(0)
            data = _read_bounded(f, path)
    except OSError as e:
        raise InputError(path, f"cannot read: {e.strerror or e}") from None
    yield Source(path, data, format_of(path, format) or _sniff(data), forced)


_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")


def _sniff(data: bytes) -> str:
    """Unknown extension: JSON documents start with `{`; anything else is taken as Thrift binary."""
    return "json" if data.lstrip()[:1] == b"{" else "binary"


def _archive_sources(path: str, f: IO[bytes], forced: type[BaseModel] | None) -> Iterator[Source]:
    archive = open_archive(path, f)
    with archive:
        found = False
        yield from no_extern_calls(path, archive.namelist())
        for info in archive.infolist():
            kind = aoti.member_type(info.filename)
            if kind is None:
                continue
            found = True
            label = f"{path}:{info.filename}"
            try:
                data = read_member(archive, info, label)
            except InputError as e:
                yield Source(label, b"", "json", forced or kind, error=e.message)
                continue
            yield Source(label, data, "json", forced or kind, archive=path, member=info.filename)
        if not found and file_kind.archive_kind(archive.namelist()) != "aoti_package":
            raise no_documents(path, archive.namelist())


def call_lengths(source: Source) -> tuple[tuple[int, int, int], ...] | None:
    """The (node, num_ints, num_tensors) of each call of the wrapper source beside an archive's
    extern-kernel member (they decide its call layout, as at load in the runner); None for a
    document outside an archive, or an archive without that source."""
    if source.archive is None or source.member is None or source.absent:
        return None
    try:
        data = source.archive_data
        with (io.BytesIO(data) if data is not None else open(source.archive, "rb")) as f, \
                open_archive(source.archive, f) as archive:
            return wrapper_calls(source.archive, archive, source.member)
    except OSError as e:
        raise InputError(source.archive, f"cannot read: {e.strerror or e}") from None


def wrapper_calls(path: str, archive: zipfile.ZipFile, member: str) -> tuple[tuple[int, int, int], ...] | None:
    """The (node, num_ints, num_tensors) of each call in the wrapper source beside extern-kernel file
    `member`, read bounded as `aoti.read_package` reads it; None when the archive has no such member."""
    name = aoti.wrapper_source(member)
    infos = [i for i in archive.infolist() if i.filename == name]
    if not infos:
        return None
    label = f"{path}:{name}"
    try:
        cpp = aoti.read_member(archive, infos[0], aoti.MAX_SOURCE_BYTES, label, limit_name="max_source_bytes")
        return aoti.wrapper_call_lengths(cpp.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise InputError(label, f"not UTF-8 at byte {e.start}") from None
    except es.PackageError as e:
        raise InputError(label, e.message) from None


def no_extern_calls(path: str, names: list[str]) -> Iterator[Source]:
    """One empty spec per model folder of an AOTInductor package that has a model but no
    extern-kernel file: what torch writes for a model without extern calls (2.15's default mode)."""
    folders = sorted({n.rsplit("/", 1)[0] for n in names if any(fnmatch.fnmatchcase(n, p)
                                                                 for p in file_kind.MODEL_MEMBERS)})
    for folder in folders:
        if not any(fnmatch.fnmatchcase(n, f"{folder}/*.wrapper.json") for n in names):
            yield Source(f"{path}:{folder}/", b'{"nodes": []}', "json", es.ExternKernelNodes, absent=True)


def no_documents(path: str, names: list[str]) -> InputError:
    """An archive with no schema member: what it is (file_kind), and where externspec looked."""
    kind = file_kind.archive_kind(names)
    if kind != "other_zip":
        return InputError(path, file_kind.describe(kind), kind=kind)
    return InputError(path, f"no externspec document in this archive (looked for "
                      f"{', '.join(p for p, _ in aoti.SCHEMA_MEMBERS)}): {file_kind.describe(kind)}", kind=kind)


def not_an_archive(path: str) -> InputError:
    return InputError(path, file_kind.describe("not_zip"), kind="not_zip")


def open_archive(path: str, f: IO[bytes]) -> zipfile.ZipFile:
    """The zip archive in `f` with its member list read, or InputError naming `path`."""
    try:
        archive = zipfile.ZipFile(f)
        archive.infolist()
    except aoti.ZIP_ERRORS as e:
        raise InputError(path, f"cannot read the archive: {e}") from None
    return archive


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, label: str) -> bytes:
    """A schema member's bytes, at most the size limit, read as `externspec.aoti` reads a package's members;
    InputError naming `label` when it cannot be (too large by its header, encrypted, an unknown
    compression, corrupt, not the size its header records)."""
    try:
        return aoti.read_member(archive, info, _limit(), label, limit_name=aoti.DEFAULT_LIMIT_NAME)
    except es.PackageError as e:
        raise InputError(label, e.message) from None


# The first top-level key of each document type as torch and externspec write it (declaration order).
_FIRST_KEYS: dict[bytes, type[BaseModel]] = {
    b"graph_module": es.ExportedProgram,
    b"nodes": es.ExternKernelNodes,
    b"target": es.Node,
    b"config": es.PayloadConfig,
}
_FIRST_KEY = re.compile(rb'\A\s*\{\s*"([A-Za-z_]{1,32})"\s*:')


def peek_json_type(data: bytes, label: str) -> type[BaseModel]:
    """The document type of JSON text, from its first top-level key when that key tells (without
    parsing the document), else from all its top-level keys (`name` before `node` is ambiguous)."""
    m = _FIRST_KEY.match(data)
    if m and m.group(1) in _FIRST_KEYS:
        return _FIRST_KEYS[m.group(1)]
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError):  # UnicodeDecodeError and int-digit limits are ValueErrors
        raw = None
    if raw is None:  # not JSON (or `null`): report it as the wire decoder words syntax errors
        try:
            es.loads(data, es.ExternKernelNodes)
        except es.DecodeError as e:
            raise InputError(label, e.errors()[0]["message"], path=e.path) from None
    return detect_json_type(raw, label)


def detect_json_type(raw: Any, label: str) -> type[BaseModel]:
    """The document type of parsed JSON, from its top-level keys."""
    if not isinstance(raw, dict):
        raise InputError(label, f"expected a JSON object at the top level, got {_json_kind(raw)}")
    keys = set(raw)
    if "graph_module" in keys:
        return es.ExportedProgram
    if "nodes" in keys and "inputs" not in keys:
        return es.ExternKernelNodes
    if {"name", "node"} <= keys:
        return es.ExternKernelNode
    if "target" in keys:
        return es.Node
    if "config" in keys:
        return es.PayloadConfig
    shown = ", ".join(sorted(keys)[:6]) or "none"
    raise InputError(label, f"cannot tell the document type from its top-level keys ({shown}); "
                     f"pass --type ({', '.join(DOCUMENT_TYPES)})")


def _json_kind(raw: Any) -> str:
    return {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a bool"}.get(
        type(raw), "null")


def decode(source: Source, *, strict: bool = False) -> BaseModel:
    """Decode a source into its model. Raises InputError, es.DecodeError or es.VersionError."""
    if source.error is not None:
        raise InputError(source.label, source.error)
    if source.format == "json":
        doc_type = source.type or peek_json_type(source.data, source.label)
        source.type = doc_type
        return es.loads(source.data, doc_type, strict=strict, source=source.label)
    from externspec import thrift  # imported when needed: the JSON path stays light

    protocol: Protocol = "binary" if source.format == "binary" else "compact"
    try:
        if source.type is not None:
            return thrift.loads(source.data, source.type, protocol, strict=strict, source=source.label)
        return _decode_thrift_any(source, protocol, strict)
    except (es.DecodeError, InputError) as e:
        other = _other_format(source, protocol)
        if other is None:
            raise
        first = e.message if isinstance(e, InputError) else e.errors()[0]["message"]
        raise InputError(source.label, f"not a Thrift {protocol} document ({first}); it reads as {other[0]}: "
                         f"pass --from {other[1]}") from None


def _other_format(source: Source, protocol: Protocol) -> tuple[str, str] | None:
    """What a document that is not Thrift `protocol` reads as instead, and the `--from` that reads
    it: JSON, or the other Thrift protocol (a `.tbin` holding compact); None when neither reads it."""
    from externspec import thrift

    if source.data.lstrip()[:1] == b"{":
        return "JSON", "json"
    other: Protocol = "compact" if protocol == "binary" else "binary"
    for doc_type in [source.type] if source.type is not None else list(DOCUMENT_TYPES.values()):
        try:
            thrift.loads(source.data, doc_type, other, source=source.label)
        except es.DecodeError:
            continue
        return f"a Thrift {other} {doc_type.__name__}", other
    return None


def _decode_thrift_any(source: Source, protocol: Protocol, strict: bool) -> BaseModel:
    from externspec import thrift

    """Thrift carries no type name: try each document type; their first fields tell them apart."""
    failures: list[tuple[es.DecodeError, type[BaseModel]]] = []
    for doc_type in DOCUMENT_TYPES.values():
        try:
            model = thrift.loads(source.data, doc_type, protocol, strict=strict, source=source.label)
        except es.DecodeError as e:
            failures.append((e, doc_type))
            continue
        source.type = doc_type
        return model
    # Report the attempt that fits best: not one whose top-level fields have other wire types, and
    # among the rest the one that got furthest (the longest error path).
    def fit(failure: tuple[es.DecodeError, type[BaseModel]]) -> tuple[bool, int]:
        e = failure[0]
        mismatch = e.errors()[0]["kind"] == "type" and len(e.errors()[0]["loc"]) <= 1
        return (not mismatch, len(e.path))

    best, best_type = max(failures, key=fit)
    source.type = best_type
    if best.path == "$":
        raise InputError(source.label, f"not a Thrift {protocol} document of any externspec type "
                         f"({', '.join(DOCUMENT_TYPES)}); first problem: {best.errors()[0]['message']}")
    raise best


NO_EXTERN_CALLS = "no extern calls"
ABSENT = f"{NO_EXTERN_CALLS} (the model folder has no *.wrapper.json)"


def summary(model: BaseModel, *, absent: bool = False) -> str:
    """A short description: type, schema version, size (`absent`: the spec of a model folder
    without an extern-kernel file, `no_extern_calls`)."""
    name = type(model).__name__
    if absent:
        return f"AOTInductor model, {ABSENT}"
    if isinstance(model, es.ExternKernelNodes):
        n = len(model.nodes)
        return f"{name}, {schema_version_text(model)}, {n} node{'s' if n != 1 else ''}" if n else \
            f"{name}, {schema_version_text(model)}, {NO_EXTERN_CALLS}"
    if isinstance(model, es.ExportedProgram):
        n = len(model.graph_module.graph.nodes)
        return f"{name}, {schema_version_text(model)}, {n} node{'s' if n != 1 else ''}"
    if isinstance(model, es.PayloadConfig):
        n = len(model.config)
        return f"{name}, {n} entr{'ies' if n != 1 else 'y'}"
    return name


def facts(model: BaseModel) -> dict[str, Any]:
    """The summary's facts for `--format json`: schema version (`"M.N"` or None) and the count of
    nodes (documents with nodes) or entries (PayloadConfig), as numbers."""
    version = getattr(model, "schema_version", None)
    out: dict[str, Any] = {"schema_version": f"{version.major}.{version.minor}" if version is not None else None}
    if isinstance(model, es.ExternKernelNodes):
        out["nodes"] = len(model.nodes)
    elif isinstance(model, es.ExportedProgram):
        out["nodes"] = len(model.graph_module.graph.nodes)
    elif isinstance(model, es.PayloadConfig):
        out["entries"] = len(model.config)
    return out


def schema_version_text(model: BaseModel) -> str:
    if isinstance(model, es.ExternKernelNodes):
        v = model.schema_version
        if v is None:
            return f"unversioned (torch-written, read as schema {_v(_version.BASELINE)})"
        return f"schema {_v(v)}"
    if isinstance(model, es.ExportedProgram):
        return f"torch export schema {_v(model.schema_version)}"
    return "unversioned"


def _v(v: es.SchemaVersion) -> str:
    return f"{v.major}.{v.minor}"
