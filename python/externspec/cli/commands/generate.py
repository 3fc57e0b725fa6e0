"""`externspec generate`: regenerate (or `--check`) the code generated from the IDL.

The same as `python -m externspec.codegen generate|check`; it needs the codegen extra (thriftpy2).
"""

from __future__ import annotations

import argparse
import os
import sys

NAME = "generate"
HELP = "regenerate the models (and C++ header) from the IDL; --check fails on drift instead"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--idl", default="schema/externspec.thrift", help="the IDL file")
    p.add_argument("--root", default=".", help="repository root the outputs are relative to")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if generated files are stale")


def run(args: argparse.Namespace) -> int:
    try:
        from externspec.codegen.__main__ import main as codegen_main
    except ImportError as e:
        print(f"externspec generate: the code generator needs the codegen extra "
              f"(pip install 'externspec[codegen]'): {e}", file=sys.stderr)
        return 2  # an optional dependency is missing: a usage error, naming the extra
    if not os.path.isfile(args.idl):
        print(f"externspec generate: {args.idl}: no such IDL file. The generator works in a checkout of the "
              f"externspec repository (the installed package ships the generated code, not the IDL): run it "
              f"from the repository root, or pass --idl and --root", file=sys.stderr)
        return 1
    return codegen_main(["check" if args.check else "generate", "--idl", args.idl, "--root", args.root])
