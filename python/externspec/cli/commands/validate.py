"""`externspec validate FILE...`: decode each file and report OK or every error with its JSON path.

`--format json|github` reports the same findings for programs and CI (commands/_report.py)."""

from __future__ import annotations

import argparse
import sys

import externspec as es

from . import _documents as docs
from ._report import FileResult, Reporter, add_format_arguments, problems_of
from ._terminal import Painter, Progress, shown

NAME = "validate"
HELP = ("check extern-kernel JSON, node specs, exported programs and .pt2 archives (the JSON inside) "
        "against the schema")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="JSON, Thrift binary/compact, or .pt2 files ('-': stdin)")
    p.add_argument("--strict", action="store_true",
                   help="reject unknown keys everywhere (by default torch-written files may carry extras)")
    p.add_argument("--type", choices=list(docs.DOCUMENT_TYPES), help="document type (default: detected)")
    p.add_argument("--from", dest="from_", choices=docs.FORMATS, metavar="{json,binary,compact}",
                   help="input format (default: from the extension, else sniffed)")
    add_format_arguments(p)


def run(args: argparse.Namespace) -> int:
    reporter = Reporter(args.output_format)
    paint = Painter(sys.stdout)
    progress = Progress(len(args.files))
    for n, path in enumerate(args.files, 1):
        progress.update(n, path)
        result, lines = check_file(path, args, paint)
        progress.clear()
        reporter.add(result)
        if reporter.text:
            print("\n".join(lines), flush=True)
    bad = sum(not r.ok for r in reporter.results)
    if reporter.text and (len(args.files) > 1 or bad):
        print(paint(f"{bad} invalid" if bad else "all valid", "red" if bad else "green")
              + f" ({len(args.files)} file{'s' if len(args.files) != 1 else ''})")
    return reporter.finish()


def check_file(path: str, args: argparse.Namespace, paint: Painter) -> tuple[FileResult, list[str]]:
    """One FILE: its result (every document in it, every problem) and the text lines that say so."""
    result = FileResult(path, fields={"documents": []})
    lines: list[str] = []
    try:
        for source in docs.read_sources(path, format=args.from_, type_name=args.type):
            document: dict[str, object] = {"source": source.label, "type": None, "ok": True}
            result.fields["documents"].append(document)
            try:
                model = docs.decode(source, strict=args.strict)
            except (es.DecodeError, es.VersionError, docs.InputError) as e:
                problems = problems_of(e, label=source.label, file=path)
                result.errors += problems
                document.update(ok=False, type=source.type.__name__ if source.type else None)
                if isinstance(e, es.DecodeError):
                    kind = source.type.__name__ if source.type else "document"
                    lines.append(f"{paint('INVALID', 'red')}  {shown(source.label)}  ({kind}, {e.error_count()} "
                                 f"error{'s' if e.error_count() != 1 else ''})")
                    lines += [f"  {shown(d['path'])}: {shown(d['message'])}" for d in e.errors()]
                else:
                    lines.append(f"{paint('INVALID', 'red')}  {shown(source.label)}")
                    lines.append(f"  {shown(_located(e))}")
            else:
                text = docs.summary(model, absent=source.absent)
                document.update(type=type(model).__name__, summary=text, **docs.facts(model))
                lines.append(f"{paint('OK', 'green')}       {shown(source.label)}  ({shown(text)})")
    except docs.InputError as e:
        result.errors += problems_of(e, label=path, file=path)
        lines.append(f"{paint('INVALID', 'red')}  {shown(path)}")
        lines.append(f"  {shown(_located(e))}")
    return result, lines


def _located(e: es.VersionError | docs.InputError) -> str:
    """An error without the file name, which the header line already shows."""
    return e.message if isinstance(e, docs.InputError) and e.path == "$" else f"{e.path}: {e.message}"
