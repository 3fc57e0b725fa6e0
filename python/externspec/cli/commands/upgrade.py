"""`externspec upgrade IN OUT`: rewrite a document of an older schema major as the current one.

The C++ decoder does not run upgraders; it refuses an older major and names this command. The
document is read with the registered upgraders (`externspec.wire.upgrade`), validated as the current
schema, and written back; an upgraded document carries the new major's version stamp. A document
that needs no upgrade is written as read (re-encoded).

IN may be a .pt2 archive, as for `validate` and `inspect`: its extern-kernel JSON
(`*/data/aotinductor/*/*.wrapper.json`) and exported programs (`*/models/*.json`) that need an
upgrade are rewritten; every other member, and every member that needs none, is copied as it is
(same name, order, compression, time stamp, attributes and extra fields; the same bytes). Every
schema member is read and checked before OUT is touched, and OUT is written through a temporary
file in its directory that replaces it only once complete (commands/_output.py).
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import struct
import sys
import zipfile
from types import ModuleType
from typing import IO, Any

from ...aoti import ZIP_ERRORS
from ._ops import load_advice, register_ops
from ._output import OutputError, open_output, write_output

NAME = "upgrade"
HELP = "rewrite a document (or the schema documents of a .pt2 archive) written under an older schema major"

_CHUNK = 1 << 20


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", help="the document to upgrade (JSON), or a .pt2 archive")
    p.add_argument("output", help="where to write the upgraded document or archive ('-' for stdout)")
    p.add_argument("--type", help="the document's model type (default: detected, as by validate; a .pt2 "
                                  "member's type is its place in the archive)")
    p.add_argument("--models", default="externspec._generated.models",
                   help="module of generated models to upgrade to (default: the installed schema)")
    p.add_argument("--name-defaults", action="store_true",
                   help="also rewrite torch-written extern-kernel files so each node names the kwarg-only "
                        "defaults the wrapper passes (decided from the wrapper's num_ints), stamped NODE_ARGUMENTS")
    p.add_argument("--torch", metavar="RELEASE", dest="compiled_by",
                   help="with --name-defaults: the torch that compiled the file (e.g. 2.13), for a file without "
                        "its wrapper source")
    p.add_argument("--load", action="append", default=[], metavar="OPS",
                   help="with --name-defaults: register custom ops first (.so, .py or module; repeatable)")


def run(args: argparse.Namespace) -> int:
    from pydantic import BaseModel

    from ... import wire
    from ...errors import ExternSpecError
    from . import _documents as docs

    try:
        models = importlib.import_module(args.models)
    except ImportError as e:
        print(f"externspec upgrade: cannot import models module {args.models!r}: {e}", file=sys.stderr)
        return 1
    if (args.compiled_by or args.load) and not args.name_defaults:
        print("externspec upgrade: --torch and --load go with --name-defaults", file=sys.stderr)
        return 2
    if args.name_defaults and not register_ops(args.load, NAME):
        return 1
    if _is_archive(args.input):
        return _upgrade_archive(args.input, args.output, models, args)
    try:
        (source,) = docs.read_sources(args.input, format="json")
        type_name = args.type or docs.peek_json_type(source.data, source.label).__name__
        type_ = getattr(models, type_name, None)
        if not (isinstance(type_, type) and issubclass(type_, BaseModel)):
            print(f"externspec upgrade: {args.models} has no document type {type_name!r}", file=sys.stderr)
            return 1
        model = wire.loads(source.data, type_, source=source.label)
        if args.name_defaults and _torch_written(model, source.data):
            model = _named(model, None, args.compiled_by, source.label)
    except (ExternSpecError, docs.InputError) as e:
        print(f"externspec upgrade: {e}", file=sys.stderr)
        return 1
    try:
        write_output(args.output, (wire.dumps(model) + ("\n" if args.output == "-" else "")).encode())
    except OutputError as e:
        print(f"externspec upgrade: {e}", file=sys.stderr)
        return 1
    if args.output != "-":
        v = getattr(model, "schema_version", None)
        print(f"wrote {args.output}" + (f" (schema {v.major}.{v.minor})" if v is not None else ""))
    return 0


def _is_archive(path: str) -> bool:
    """A .pt2 by name (a damaged one is then reported as such), or any zip archive by content."""
    if path == "-":
        return False
    if path.endswith(".pt2"):
        return True
    try:
        return zipfile.is_zipfile(path)
    except OSError:
        return False  # reported by the JSON path, worded as every command words it


def _upgrade_archive(path: str, output: str, models: ModuleType, args: argparse.Namespace) -> int:
    from ...errors import ExternSpecError
    from . import _documents as docs

    try:
        with open(path, "rb") as f:
            if not zipfile.is_zipfile(f):
                raise docs.not_an_archive(path)
            archive = docs.open_archive(path, f)
            with archive:
                rewritten = _upgraded_members(path, archive, models, args)
                with open_output(output) as out:
                    if rewritten:
                        _copy_archive(path, archive, out, rewritten)
                    else:  # nothing to upgrade: the archive itself, byte for byte
                        f.seek(0)
                        while chunk := _read_chunk(f, path):
                            out.write(chunk)
    except (ExternSpecError, docs.InputError) as e:
        print(f"externspec upgrade: {e}", file=sys.stderr)
        return 1
    except OutputError as e:
        print(f"externspec upgrade: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"externspec upgrade: {path}: cannot read: {e.strerror or e}", file=sys.stderr)
        return 1
    if output != "-":
        names = ", ".join(f"{name} ({version})" for name, (_, version) in rewritten.items())
        print(f"wrote {output}: " + (f"upgraded {names}" if rewritten else "no member needed an upgrade (copied)"))
    return 0


def _upgraded_members(path: str, archive: zipfile.ZipFile, models: ModuleType,
                      args: argparse.Namespace) -> dict[str, tuple[bytes, str]]:
    """member name -> (its upgraded JSON, the schema it now has), for the schema members of an older
    major, and with --name-defaults the torch-written extern-kernel files. Every schema member is
    decoded (and its problems reported) before anything is written."""
    from ... import aoti, file_kind, wire
    from ...wire import version
    from . import _documents as docs

    rewritten: dict[str, tuple[bytes, str]] = {}
    kinds = [(info, aoti.member_type(info.filename)) for info in archive.infolist()]
    if all(kind is None for _, kind in kinds) and file_kind.archive_kind(archive.namelist()) != "aoti_package":
        raise docs.no_documents(path, archive.namelist())  # not the archive the user meant: worded as validate words it
    for info, kind in kinds:
        type_ = getattr(models, kind.__name__, None) if kind is not None else None
        if type_ is None:
            continue
        label = f"{path}:{info.filename}"
        data = docs.read_member(archive, info, label)
        model = wire.loads(data, type_, source=label)
        policy = version.policy_for(type_)
        if args.name_defaults and _torch_written(model, data):
            model = _named(model, docs.wrapper_calls(path, archive, info.filename), args.compiled_by, label)
            rewritten[info.filename] = (wire.dumps(model).encode(), f"{model.call_layout.name}: {model.producer}")
        elif policy.needs_upgrade(policy.raw_version(json.loads(data)), label):
            v = getattr(model, "schema_version", None)
            rewritten[info.filename] = (wire.dumps(model).encode(),
                                        f"schema {v.major}.{v.minor}" if v is not None else "upgraded")
    return rewritten


def _torch_written(model: object, data: bytes | str) -> bool:
    """An extern-kernel file torch wrote: no schema_version (the rule of docs/versioning.md)."""
    from ..._generated.models import ExternKernelNodes

    return type(model).__name__ == ExternKernelNodes.__name__ and "schema_version" not in json.loads(data)


def _named(model: Any, calls: tuple[tuple[int, int, int], ...] | None, compiled_by: str | None, label: str) -> Any:
    """`model` with its passed defaults named (abi/name_defaults.py); errors name `label`."""
    from ...abi.exporter import producer
    from ...abi.name_defaults import rewrite
    from ...errors import ExternSpecError
    from . import _documents as docs

    try:
        return rewrite(model, calls, compiled_by, producer())[0]
    except ExternSpecError as e:
        message = load_advice(e, [(n.name, n.node) for n in model.nodes])
        raise docs.InputError(label, message, path="$" if e.node is None else f"$.nodes[{e.node}]") from None


def _copy_archive(path: str, archive: zipfile.ZipFile, out: IO[bytes],
                  rewritten: dict[str, tuple[bytes, str]]) -> None:
    """Every member of `archive` into a new archive on `out`, in order, with its own header fields
    (zipfile writes the bookkeeping ones: offsets, flags, version numbers); the members in
    `rewritten` with their new content."""
    with zipfile.ZipFile(out, "w") as dst:
        for info in archive.infolist():
            header = copy.copy(info)  # name, time, compression, attributes, extra fields, comment
            header.extra = _without_zip64(info.extra)  # zipfile adds its own where the sizes need one
            if info.filename in rewritten:
                dst.writestr(header, rewritten[info.filename][0])
            else:
                _copy_member(path, archive, info, dst, header)
            dst.filelist[-1].external_attr = info.external_attr  # zipfile would set 0600 for 0
            dst.filelist[-1].create_system = info.create_system
        dst.comment = archive.comment


def _without_zip64(extra: bytes) -> bytes:
    """An extra field without its zip64 record (id 1), which holds the old archive's offsets."""
    kept, i = [], 0
    while i + 4 <= len(extra):
        ident, size = struct.unpack_from("<HH", extra, i)
        if ident != 1:
            kept.append(extra[i:i + 4 + size])
        i += 4 + size
    return b"".join(kept) + extra[i:]


def _copy_member(path: str, archive: zipfile.ZipFile, info: zipfile.ZipInfo, dst: zipfile.ZipFile,
                 header: zipfile.ZipInfo) -> None:
    """One member's content, streamed (a weights member may be larger than memory)."""
    from . import _documents as docs

    label = f"{path}:{info.filename}"
    try:
        src = archive.open(info)
    except ZIP_ERRORS as e:
        raise docs.InputError(label, f"cannot read the archive member: {e}") from None
    with src, dst.open(header, "w") as w:
        while chunk := _read_chunk(src, label):
            w.write(chunk)


def _read_chunk(src: IO[bytes], label: str) -> bytes:
    from . import _documents as docs

    try:
        return src.read(_CHUNK)
    except ZIP_ERRORS as e:  # a corrupt member (a bad CRC, truncated data)
        raise docs.InputError(label, f"cannot read the archive member: {e}") from None
