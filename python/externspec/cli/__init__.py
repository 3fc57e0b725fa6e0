"""The `externspec` command (also `python -m externspec`).

Each subcommand lives in its own module under `externspec.cli.commands` exposing `NAME`, `HELP`,
`add_arguments(parser)` and `run(args) -> int`; `SUBCOMMANDS` maps each name to its module, and
only the chosen command's module is imported (all of them for the top-level `--help` or a usage
error), so a command pays for no other. Exit codes: 0 ok, 1 the input is bad or
incompatible (or the output cannot be written), 2 usage errors (argparse). No command prints a
traceback: a closed output pipe (`externspec validate *.json | head -1`) ends the command quietly
with 1, Ctrl-C with 130, and an unexpected failure is one line naming it as an internal error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from externspec.cli.commands import _terminal

SUBCOMMANDS: dict[str, str] = {
    "validate": "externspec.cli.commands.validate",
    "inspect": "externspec.cli.commands.inspect",
    "convert": "externspec.cli.commands.convert",
    "check-spec": "externspec.cli.commands.check_spec",
    "compat": "externspec.cli.commands.compat",
    "upgrade": "externspec.cli.commands.upgrade",
    "version": "externspec.cli.commands.version",
    "generate": "externspec.cli.commands.generate",
}

INTERNAL_ERROR = "internal error (a bug in externspec: please report it)"


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser for `argv`: with only the chosen command's subparser when `argv` names one, else
    with every command's (the top-level `--help`, an unknown or missing command)."""
    from externspec import __version__

    chosen = _chosen_command(sys.argv[1:] if argv is None else argv)

    parser = argparse.ArgumentParser(prog="externspec", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"externspec {__version__}")
    _add_color_argument(parser, default="auto")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in SUBCOMMANDS.items():
        if chosen is not None and name != chosen:
            continue
        module = importlib.import_module(module_name)
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        _add_color_argument(p, default=argparse.SUPPRESS)  # after the command too; keeps one given before
        p.set_defaults(_run=module.run)
    if chosen is None:
        parser.epilog = options_epilog(sub)
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
    return parser


def options_epilog(sub: argparse._SubParsersAction) -> str:
    """Every command's options, for the top-level `--help` (`externspec COMMAND --help` explains each):
    no option is found only by asking each command."""
    lines = ["options of each command (externspec COMMAND --help says what they do):"]
    for name, p in sub.choices.items():
        flags = [a.option_strings[-1] if len(a.option_strings[-1]) > 2 else a.option_strings[0]
                 for a in p._actions if a.option_strings and a.help != argparse.SUPPRESS
                 and a.dest not in ("help", "color")]
        lines.append(f"  {name:<11} {' '.join(flags) or '(none)'}")
    return "\n".join(lines)


def _chosen_command(words: list[str]) -> str | None:
    """The command `words` name: their first word that is not a top-level option (or its value)."""
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word == "--color":
            skip = True
        elif not word.startswith("-"):
            return word if word in SUBCOMMANDS else None
    return None


def _add_color_argument(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument("--color", choices=_terminal.COLOR_MODES, default=default,
                   help="colour the text output: auto (a terminal, unless NO_COLOR; FORCE_COLOR forces it), "
                        "always or never (default: auto)")


def main(argv: list[str] | None = None) -> int:
    args = build_parser(argv).parse_args(argv)
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
