"""`externspec convert IN OUT`: JSON <-> Thrift binary/compact, chosen by extension or `--to`."""

from __future__ import annotations

import argparse
import sys

import externspec as es

from . import _documents as docs
from ._output import OutputError, write_output

NAME = "convert"
HELP = "convert a document between JSON and Thrift binary/compact (.json, .bin/.tbin, .compact)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="IN", help="the document to read")
    p.add_argument("output", metavar="OUT", help="the file to write ('-' for stdout, JSON unless --to says otherwise)")
    p.add_argument("--to", choices=docs.FORMATS, help="output format (default: from OUT's extension)")
    p.add_argument("--from", dest="from_", choices=docs.FORMATS, metavar="{json,binary,compact}",
                   help="input format (default: from IN's extension, else sniffed)")
    p.add_argument("--type", choices=list(docs.DOCUMENT_TYPES), help="document type (default: detected)")
    p.add_argument("--strict", action="store_true", help="reject unknown keys/fields in the input")


def run(args: argparse.Namespace) -> int:
    out_format = args.to or docs.format_of(args.output) or ("json" if args.output == "-" else None)
    if out_format is None:
        print(f"externspec convert: cannot tell the output format from {args.output!r}: use an extension "
              f"({', '.join(docs.EXTENSIONS)}) or --to", file=sys.stderr)
        return 2
    try:
        sources = list(docs.read_sources(args.input, format=args.from_, type_name=args.type))
        if len(sources) != 1:
            names = ", ".join(s.label.rsplit(":", 1)[-1] for s in sources)
            print(f"externspec convert: {args.input} holds {len(sources)} documents ({names}); convert takes "
                  f"one: extract it first", file=sys.stderr)
            return 1
        (source,) = sources
        model = docs.decode(source, strict=args.strict)
    except (es.DecodeError, es.VersionError, docs.InputError) as e:
        print(f"externspec convert: {e}", file=sys.stderr)
        return 1
    if out_format == "json":
        data = es.dumps(model).encode()
    else:
        from externspec import thrift

        data = thrift.dumps(model, "binary" if out_format == "binary" else "compact")
    try:
        write_output(args.output, data)
    except OutputError as e:
        print(f"externspec convert: {e}", file=sys.stderr)
        return 1
    if args.output == "-":
        return 0
    print(f"{args.output}: {type(model).__name__}, {out_format}, {len(data)} bytes "
          f"(from {source.format}, {len(source.data)} bytes)")
    return 0
