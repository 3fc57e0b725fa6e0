"""`externspec validate FILE...`: decode each file and report OK or every error with its JSON path."""

from __future__ import annotations

import argparse
import sys

import externspec as es

from . import _documents as docs
from ._terminal import Painter, Progress

NAME = "validate"
HELP = ("check extern-kernel JSON, node specs, exported programs and .pt2 archives (the JSON inside) "
        "against the schema")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="JSON, Thrift binary/compact, or .pt2 files")
    p.add_argument("--strict", action="store_true",
                   help="reject unknown keys everywhere (by default torch-written files may carry extras)")
    p.add_argument("--type", choices=list(docs.DOCUMENT_TYPES), help="document type (default: detected)")
    p.add_argument("--format", choices=docs.FORMATS, help="file format (default: from the extension)")


def run(args: argparse.Namespace) -> int:
    paint = Painter(sys.stdout)
    progress = Progress(len(args.files))
    bad = 0
    for n, path in enumerate(args.files, 1):
        progress.update(n, path)
        lines = []
        try:
            for source in docs.read_sources(path, format=args.format, type_name=args.type):
                try:
                    model = docs.decode(source, strict=args.strict)
                except es.DecodeError as e:
                    bad += 1
                    kind = source.type.__name__ if source.type else "document"
                    lines.append(f"{paint('INVALID', 'red')}  {source.label}  ({kind}, {e.error_count()} "
                                 f"error{'s' if e.error_count() != 1 else ''})")
                    lines += [f"  {d['path']}: {d['message']}" for d in e.errors()]
                except (es.VersionError, docs.InputError) as e:
                    bad += 1
                    lines.append(f"{paint('INVALID', 'red')}  {source.label}")
                    lines.append(f"  {_without_label(str(e), source.label)}")
                else:
                    lines.append(f"{paint('OK', 'green')}       {source.label}  ({docs.summary(model)})")
        except docs.InputError as e:
            bad += 1
            lines.append(f"{paint('INVALID', 'red')}  {path}")
            lines.append(f"  {_without_label(str(e), path)}")
        progress.clear()
        print("\n".join(lines), flush=True)
    if len(args.files) > 1 or bad:
        print(paint(f"{bad} invalid" if bad else "all valid", "red" if bad else "green")
              + f" ({len(args.files)} file{'s' if len(args.files) != 1 else ''})")
    return 1 if bad else 0


def _without_label(message: str, label: str) -> str:
    """Errors start with the file name, which the header line already shows."""
    return message.removeprefix(f"{label}: ")
