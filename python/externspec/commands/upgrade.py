"""`externspec upgrade IN OUT`: rewrite a document of an older schema major as the current one.

The C++ decoder does not run upgraders; it refuses an older major and names this command. The
document is read with the registered upgraders (`externspec.upgrade`), validated as the current
schema, and written back; an upgraded document carries the new major's version stamp. A document
that needs no upgrade is written as read (re-encoded).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from ._output import OutputError, write_output

NAME = "upgrade"
HELP = "rewrite a document written under an older schema major in the current schema"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", help="the document to upgrade (JSON)")
    p.add_argument("output", help="where to write the upgraded document ('-' for stdout)")
    p.add_argument("--type", default="ExternKernelNodes", help="the document's model type (default: %(default)s)")
    p.add_argument("--models", default="externspec._generated.models",
                   help="module of generated models to upgrade to (default: the installed schema)")


def run(args: argparse.Namespace) -> int:
    from pydantic import BaseModel

    from .. import wire
    from ..errors import ExternSpecError

    try:
        models = importlib.import_module(args.models)
    except ImportError as e:
        print(f"externspec upgrade: cannot import models module {args.models!r}: {e}", file=sys.stderr)
        return 1
    type_ = getattr(models, args.type, None)
    if not (isinstance(type_, type) and issubclass(type_, BaseModel)):
        print(f"externspec upgrade: {args.models} has no document type {args.type!r}", file=sys.stderr)
        return 1
    try:
        model = wire.load(args.input, type_)
    except ExternSpecError as e:
        print(f"externspec upgrade: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"externspec upgrade: {args.input}: cannot read: {e.strerror or e}", file=sys.stderr)
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
