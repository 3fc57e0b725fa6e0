"""Reading the files the command line accepts, and recognising which document each one holds.

A file is JSON (torch's format), a Thrift binary or compact document, or a `.pt2` archive whose
JSON members are found by their place in the archive:
* AOTInductor packages: `*/data/aotinductor/*/*.wrapper.json` (ExternKernelNodes);
* torch.export archives: `*/models/*.json` (ExportedProgram);
* both: `*/data/weights/*_config.json` and `*/data/constants/*_config.json` (PayloadConfig).
Other members (kernel metadata, weights) are not schema documents and are left alone.
"""

from __future__ import annotations

import fnmatch
import json
import os
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

import externspec as es
from externspec import thrift_codec

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

_ARCHIVE_MEMBERS = (
    ("*/data/aotinductor/*/*.wrapper.json", es.ExternKernelNodes),
    ("*/models/*.json", es.ExportedProgram),
    ("*/data/weights/*_config.json", es.PayloadConfig),
    ("*/data/constants/*_config.json", es.PayloadConfig),
)


class InputError(Exception):
    """A file that cannot be read as any document (missing, not JSON, unknown kind). Exit code 1."""


@dataclass
class Source:
    """One document to decode: where it came from, its bytes, its format and (if known) its type."""

    label: str  # a file path, or `archive.pt2:member/path.json`
    data: bytes
    format: str  # json | binary | compact
    type: type[BaseModel] | None = None


def format_of(path: str, override: str | None = None) -> str | None:
    """The format named by `override` or by the file extension; None if neither says."""
    if override:
        return override
    return EXTENSIONS.get(os.path.splitext(path)[1].lower())


def read_sources(path: str, *, format: str | None = None, type_name: str | None = None) -> Iterator[Source]:
    """The documents in a file: one for a plain file, one per schema member of a .pt2 archive."""
    forced = DOCUMENT_TYPES[type_name] if type_name else None
    try:
        if zipfile.is_zipfile(path):
            yield from _archive_sources(path, forced)
            return
        with open(path, "rb") as f:
            data = f.read()
    except (OSError, zipfile.BadZipFile) as e:
        raise InputError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    fmt = format_of(path, format) or _sniff(data)
    if path.endswith(".pt2"):
        raise InputError(f"{path}: not a zip archive (a .pt2 file is one): truncated or not a .pt2")
    yield Source(path, data, fmt, forced)


def _sniff(data: bytes) -> str:
    """Unknown extension: JSON documents start with `{`; anything else is taken as Thrift binary."""
    return "json" if data.lstrip()[:1] == b"{" else "binary"


def _archive_sources(path: str, forced: type[BaseModel] | None) -> Iterator[Source]:
    with zipfile.ZipFile(path) as archive:
        found = False
        for name in archive.namelist():
            kind = next((t for pattern, t in _ARCHIVE_MEMBERS if fnmatch.fnmatch(name, pattern)), None)
            if kind is None:
                continue
            found = True
            try:
                data = archive.read(name)
            except (zipfile.BadZipFile, OSError, EOFError) as e:
                raise InputError(f"{path}:{name}: cannot read the archive member: {e}") from None
            yield Source(f"{path}:{name}", data, "json", forced or kind)
        if not found:
            raise InputError(
                f"{path}: no externspec document in this archive (looked for "
                f"{', '.join(p for p, _ in _ARCHIVE_MEMBERS)})"
            )


def detect_json_type(raw: Any, label: str) -> type[BaseModel]:
    """The document type of parsed JSON, from its top-level keys."""
    if not isinstance(raw, dict):
        raise InputError(f"{label}: expected a JSON object at the top level, got {_json_kind(raw)}")
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
    raise InputError(f"{label}: cannot tell the document type from its top-level keys ({shown}); "
                     f"pass --type ({', '.join(DOCUMENT_TYPES)})")


def _json_kind(raw: Any) -> str:
    return {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a bool"}.get(
        type(raw), "null")


def decode(source: Source, *, strict: bool = False) -> BaseModel:
    """Decode a source into its model. Raises InputError, es.DecodeError or es.VersionError."""
    if source.format == "json":
        doc_type = source.type
        if doc_type is None:
            try:
                raw = json.loads(source.data)
            except (ValueError, RecursionError) as e:
                raise InputError(f"{source.label}: not valid JSON: {e}") from None
            doc_type = detect_json_type(raw, source.label)
        source.type = doc_type
        return es.loads(source.data, doc_type, strict=strict, source=source.label)
    protocol: thrift_codec.Protocol = "binary" if source.format == "binary" else "compact"
    if source.type is not None:
        return thrift_codec.loads(source.data, source.type, protocol, strict=strict, source=source.label)
    return _decode_thrift_any(source, protocol, strict)


def _decode_thrift_any(source: Source, protocol: thrift_codec.Protocol, strict: bool) -> BaseModel:
    """Thrift carries no type name: try each document type; their first fields tell them apart."""
    failures: list[tuple[es.DecodeError, type[BaseModel]]] = []
    for doc_type in DOCUMENT_TYPES.values():
        try:
            model = thrift_codec.loads(source.data, doc_type, protocol, strict=strict, source=source.label)
        except es.DecodeError as e:
            failures.append((e, doc_type))
            continue
        source.type = doc_type
        return model
    # Report the attempt that fits best: not one whose top-level fields have other wire types, and
    # among the rest the one that got furthest (the longest error path).
    def fit(failure: tuple[es.DecodeError, type[BaseModel]]) -> tuple[bool, int]:
        e = failure[0]
        mismatch = "has wire type" in e.errors[0][1] and e.path.count(".") <= 1 and "[" not in e.path
        return (not mismatch, len(e.path))

    best, best_type = max(failures, key=fit)
    source.type = best_type
    if best.path == "$":
        raise InputError(f"{source.label}: not a Thrift {protocol} document of any externspec type "
                         f"({', '.join(DOCUMENT_TYPES)}); first problem: {best.errors[0][1]}")
    raise best


def summary(model: BaseModel) -> str:
    """A short description: type, schema version, size."""
    name = type(model).__name__
    if isinstance(model, es.ExternKernelNodes):
        n = len(model.nodes)
        return f"{name}, {schema_version_text(model)}, {n} node{'s' if n != 1 else ''}"
    if isinstance(model, es.ExportedProgram):
        n = len(model.graph_module.graph.nodes)
        return f"{name}, {schema_version_text(model)}, {n} node{'s' if n != 1 else ''}"
    if isinstance(model, es.PayloadConfig):
        n = len(model.config)
        return f"{name}, {n} entr{'ies' if n != 1 else 'y'}"
    return name


def schema_version_text(model: BaseModel) -> str:
    if isinstance(model, es.ExternKernelNodes):
        v = model.schema_version
        if v is None:
            return f"unversioned (torch-written, read as schema {_v(es.SCHEMA_VERSION)})"
        return f"schema {_v(v)}"
    if isinstance(model, es.ExportedProgram):
        return f"torch export schema {_v(model.schema_version)}"
    return "unversioned"


def _v(v: es.SchemaVersion) -> str:
    return f"{v.major}.{v.minor}"
