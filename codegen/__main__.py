"""`python -m externspec.codegen`: generate code from the IDL, or check it for drift."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import load_schema
from .errors import SchemaError
from .generate import default_targets, render, stale, write


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m externspec.codegen", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    for name, help_ in (("generate", "write the generated files"),
                        ("check", "fail if the checked-in generated files are stale")):
        p = sub.add_parser(name, help=help_)
        p.add_argument("--idl", default="schema/externspec.thrift", help="the IDL file")
        p.add_argument("--root", default=".", help="repository root the outputs are relative to")
    args = ap.parse_args(argv)

    root = Path(args.root)
    try:
        schema = load_schema(args.idl, display_path=args.idl)
    except SchemaError as e:
        print(e, file=sys.stderr)
        return 1
    targets = default_targets(root)
    files = render(schema, targets)
    if args.command == "generate":
        for path in write(files):
            print(f"wrote {path}")
        return 0
    problems = stale(files, targets)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        print("generated code is stale: run `make generate` and commit the result", file=sys.stderr)
        return 1
    print(f"generated code is current ({len(files)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
