"""`python -m externspec.codegen.compat`: the `make check-schema` gate (see history.py);
`--list-rules` prints every rule: id, bump, categories, purpose."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import SchemaError
from .history import check_history
from .registry import RULES


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m externspec.codegen.compat", description=__doc__)
    ap.add_argument("--idl", default="schema/externspec.thrift", help="the IDL at HEAD")
    ap.add_argument("--history", default="schema/history", help="folder of frozen releases vX.Y.thrift")
    ap.add_argument("--list-rules", action="store_true", help="print the rule table and exit")
    args = ap.parse_args(argv)
    if args.list_rules:
        for r in RULES.values():
            cats = ", ".join(str(c) for c in r.categories)
            print(f"{r.id:38} {r.bump!s:9} {cats:32} {r.purpose}")
        return 0
    try:
        result = check_history(Path(args.idl), Path(args.history))
    except (OSError, SchemaError) as e:
        print(e, file=sys.stderr)
        return 1
    print("\n".join(result.lines))
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
