"""The `externspec` command (also `python -m externspec`).

Each subcommand lives in its own module exposing `NAME`, `HELP`, `add_arguments(parser)` and
`run(args) -> int`; `SUBCOMMANDS` lists them. Exit codes: 0 ok, 1 the input is bad or
incompatible, 2 usage errors (argparse).
"""

from __future__ import annotations

import argparse
import importlib
import sys

SUBCOMMANDS: tuple[str, ...] = (
    "externspec.cli_check_spec",
    "externspec.cli_compat",
    "externspec.cli_upgrade",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="externspec", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in SUBCOMMANDS:
        module = importlib.import_module(module_name)
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args._run(args))


if __name__ == "__main__":
    sys.exit(main())
