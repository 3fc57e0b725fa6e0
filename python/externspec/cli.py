"""The `externspec` command (also `python -m externspec`).

Each subcommand lives in its own module under `externspec.commands` exposing `NAME`, `HELP`, `add_arguments(parser)` and
`run(args) -> int`; `SUBCOMMANDS` lists them. Exit codes: 0 ok, 1 the input is bad or
incompatible (or the output cannot be written), 2 usage errors (argparse). No command prints a
traceback: a closed output pipe (`externspec validate *.json | head -1`) ends the command quietly
with 1, Ctrl-C with 130, and an unexpected failure is one line naming it as an internal error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from externspec.commands import _terminal

SUBCOMMANDS: tuple[str, ...] = (
    "externspec.commands.validate",
    "externspec.commands.inspect",
    "externspec.commands.convert",
    "externspec.commands.check_spec",
    "externspec.commands.compat",
    "externspec.commands.upgrade",
    "externspec.commands.version",
    "externspec.commands.generate",
)

INTERNAL_ERROR = "internal error (a bug in externspec: please report it)"


def build_parser() -> argparse.ArgumentParser:
    from externspec import __version__

    parser = argparse.ArgumentParser(prog="externspec", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"externspec {__version__}")
    _add_color_argument(parser, default="auto")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in SUBCOMMANDS:
        module = importlib.import_module(module_name)
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        _add_color_argument(p, default=argparse.SUPPRESS)  # after the command too; keeps one given before
        p.set_defaults(_run=module.run)
    return parser


def _add_color_argument(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument("--color", choices=_terminal.COLOR_MODES, default=default,
                   help="colour the text output: auto (a terminal, unless NO_COLOR; FORCE_COLOR forces it), "
                        "always or never (default: auto)")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _terminal.color_mode = args.color
    try:
        return int(args._run(args))
    except BrokenPipeError:
        # The reader went away (`| head`): stop writing, and keep the interpreter's final flush of
        # stdout from raising again at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as e:
        print(f"externspec {args.command}: {INTERNAL_ERROR}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
