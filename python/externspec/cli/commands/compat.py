"""`externspec compat OLD.thrift NEW.thrift`: classify every schema change and check the bump.

Exit 0 when the SCHEMA_VERSION change matches what the changes require, 1 otherwise (the
numbered options say how to fix it), 2 on usage errors. `--against REV` reads the old revision
of NEW.thrift from git, so a project that vendors the IDL can run the check in its CI:

    externspec compat --against origin/main schema/externspec.thrift

The checker lives in externspec.codegen (it needs thriftpy2: `pip install externspec[codegen]`);
it is imported only when this command runs.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ._report import FileResult, Problem, Reporter, add_format_arguments

if TYPE_CHECKING:
    from externspec.codegen.compat.report import Report

NAME = "compat"
HELP = "check a schema change against the version bump it requires"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="THRIFT",
                   help="OLD.thrift NEW.thrift, or only NEW.thrift with --against")
    p.add_argument("--against", metavar="REV", help="git revision holding the old version of NEW.thrift")
    p.add_argument("--at-least", action="store_true",
                   help="accept any version at least as big as required (OLD is an older release, not the last)")
    p.add_argument("--old-version", metavar="M.N", type=_version,
                   help="version of OLD when its IDL declares no SCHEMA_VERSION (e.g. torch's)")
    p.add_argument("--new-version", metavar="M.N", type=_version, help="likewise for NEW")
    p.add_argument("--no-version-const", action="store_true",
                   help="do not require a SCHEMA_VERSION const in the IDLs (pass the versions instead)")
    add_format_arguments(p)


def _version(text: str) -> tuple[int, int]:
    try:
        major, minor = (int(x) for x in text.split("."))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MAJOR.MINOR, got {text!r}") from None
    return major, minor


def git_show(rev: str, path: Path) -> tuple[str, str]:
    """The text of `path` at git revision `rev`, and a display name `REV:relpath`.

    A revision that starts with `-` is refused: git would read it as an option (`--output=FILE`
    writes a file). `--end-of-options` keeps any other text an operand."""
    if rev.startswith("-"):
        raise ValueError(f"--against {rev!r} is not a git revision (a revision does not start with `-`)")
    path = path.resolve()
    top = subprocess.run(["git", "-C", str(path.parent), "rev-parse", "--show-toplevel"],
                         capture_output=True, text=True)
    if top.returncode != 0:
        raise ValueError(f"{path}: not inside a git repository ({top.stderr.strip()})")
    rel = path.relative_to(Path(top.stdout.strip()).resolve()).as_posix()
    shown = subprocess.run(["git", "-C", top.stdout.strip(), "show", "--end-of-options", f"{rev}:{rel}"],
                           capture_output=True, text=True)
    if shown.returncode != 0:
        raise ValueError(f"cannot read {rel} at revision {rev!r}: {shown.stderr.strip()}")
    return shown.stdout, f"{rev}:{rel}"


def run(args: argparse.Namespace) -> int:
    try:
        from externspec.codegen import compat
    except ImportError as e:  # an optional dependency is missing: a usage error (2), naming the extra
        print(f"externspec compat needs the code generator's dependencies ({e}): "
              "pip install 'externspec[codegen]'", file=sys.stderr)
        return 2
    files = [Path(f) for f in args.files]
    expected = 1 if args.against else 2
    if len(files) != expected:
        usage = "NEW.thrift with --against REV" if args.against else "OLD.thrift NEW.thrift"
        print(f"externspec compat: expected {usage}, got {len(files)} file(s)", file=sys.stderr)
        return 2
    require_version = not args.no_version_const
    reporter = Reporter(args.output_format)
    result = FileResult(str(files[-1]))
    try:
        if args.against:
            text, display = git_show(args.against, files[0])
            old = compat.load(files[0], display, text=text, require_version=require_version)
        else:
            old = compat.load(files[0], str(files[0]), require_version=require_version)
        new = compat.load(files[-1], str(files[-1]), require_version=require_version)
    except OSError as e:
        result.errors.append(Problem("input", "", f"cannot read: {e.strerror or e}", file=e.filename))
        return _failed(reporter, result, f"{e.filename}: cannot read: {e.strerror or e}")
    except compat.SchemaError as e:
        result.errors += [Problem("schema", "", msg, file=loc.file, line=loc.line, col=loc.col)
                          for loc, msg in e.problems]
        return _failed(reporter, result, str(e))
    except ValueError as e:
        result.errors.append(Problem("input", "", str(e)))
        return _failed(reporter, result, str(e))
    report = compat.compare(old, new, at_least=args.at_least,
                            old_version=args.old_version, new_version=args.new_version)
    if reporter.text:
        print(report.text())
    findings = report_findings(report)
    result.errors = [] if report.ok else [*findings, _verdict_problem(report)]
    result.fields = {k: v for k, v in report.to_json().items() if k != "ok"}
    reporter.add(result, notices=findings if report.ok else None)
    return reporter.finish()


def _failed(reporter: Reporter, result: FileResult, text: str) -> int:
    if reporter.text:
        print(f"externspec compat: {text}", file=sys.stderr)
    reporter.add(result)
    return reporter.finish()


def report_findings(report: Report) -> list[Problem]:
    """Each classified change, located in its IDL (kind: the rule id)."""
    return [Problem(f.rule, "", f"[{f.rule}] {f.message} ({f.bump} bump)", file=f.loc.file, line=f.loc.line,
                    col=f.loc.col) for f in report.findings]


def _verdict_problem(report: Report) -> Problem:
    """A failed check as one problem at NEW's SCHEMA_VERSION (or NEW itself), with the options."""
    options = "; ".join(f"{i}. {opt}" for i, opt in enumerate(report.remediation(), 1))
    const = report.new.const("SCHEMA_VERSION")
    message = f"required bump: {report.required}; {report.verdict.message}" + (f". Options: {options}"
                                                                                if options else "")
    if const is None:
        return Problem("version_bump", "", message, file=report.new.path)
    return Problem("version_bump", "", message, file=const.loc.file, line=const.loc.line, col=const.loc.col)
