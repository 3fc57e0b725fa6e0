"""`externspec check-spec FILE...`: validate extern-kernel specs against the ops registered here.

Each FILE is a spec (`*.json`, externspec- or torch-written) or an AOTInductor package (`*.pt2`,
whose `*.wrapper.json` is checked). The ops a spec names must be registered first: `--load OPS`
loads a C++ op library (`.so`), runs a Python file (`.py`) or imports a module that defines them,
as `inspect --load` does. Prints the op namespaces each spec needs and whether this process has
registered them, then one line per node (its call plan); exits 1 when a file is bad or
a node does not match its op. `--runtimes`: which runtimes run each package, every supported torch
release with torch's runner, es.cpp.AOTIRunner and the Python executor (`externspec.runtimes`).
Needs torch. `--format json|github`: the same for programs and CI.
"""

from __future__ import annotations

import argparse
import sys

from ... import aoti, file_kind, runtimes
from . import _documents as docs
from ._cpu import cpu_field, cpu_text
from ._report import FileResult, Reporter, add_format_arguments, problems_of
from ._terminal import shown

NAME = "check-spec"
HELP = "validate extern-kernel specs (.json or AOTInductor .pt2) against the registered ops"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="spec JSON files or AOTInductor packages (.pt2)")
    parser.add_argument("--load", action="append", default=[], metavar="OPS",
                        help="register custom ops first: a .so library, a .py file or a module name (repeatable)")
    # The flags of earlier releases, kept as aliases of --load.
    parser.add_argument("--import", dest="load", action="append", help=argparse.SUPPRESS)
    parser.add_argument("--load-library", dest="load", action="append", help=argparse.SUPPRESS)
    parser.add_argument("--runtimes", action="store_true",
                        help="say which runtimes run each package (.pt2): torch's runner, es.cpp.AOTIRunner and "
                             "the Python executor under every supported torch release, from its C-shim calls and "
                             "call layout")
    add_format_arguments(parser)


def run(args: argparse.Namespace) -> int:
    reporter = Reporter(args.output_format)
    try:
        import torch  # noqa: F401  (the executor checks nodes against torch's op registry)
    except ImportError:
        message = "needs torch, which is not installed (pip install 'externspec[torch]')"
        print(f"externspec check-spec: {message}", file=sys.stderr)
        return 2 if reporter.text else reporter.fail_all(args.files, "setup", message) and 2
    import externspec as es

    from . import _ops

    if not _ops.register_ops(args.load, "check-spec"):
        return 1 if reporter.text else reporter.fail_all(args.files, "setup",
                                                         "the ops given with --load did not load (see stderr)")
    for path in args.files:
        result = FileResult(path, fields={"documents": []})
        label = path
        try:
            specs = [s for s in docs.read_sources(path, type_name=None if path.endswith(".pt2") else
                                                  "ExternKernelNodes")
                     if s.type in (None, es.ExternKernelNodes)]
            if not specs:
                raise _no_spec(path)
            for source in specs:
                label = source.label
                _check_source(source, result, text=reporter.text)
            if args.runtimes:
                _runtimes(path, result, text=reporter.text)
        except (es.ExternSpecError, docs.InputError) as exc:
            result.errors += problems_of(exc, label=label, file=path)
            if reporter.text:
                print(f"externspec check-spec: {shown(str(exc))}", file=sys.stderr)
        reporter.add(result)
    return reporter.finish()


def _no_spec(path: str) -> docs.InputError:
    """An archive with documents but no extern-kernel file: what it is (an ExportedProgram's archive
    from torch.export.save, most often) and what to do."""
    import zipfile

    with zipfile.ZipFile(path) as archive:
        kind = file_kind.archive_kind(archive.namelist())
    if kind == "aoti_package":
        return docs.InputError(path, f"no {aoti.EXTERN_KERNELS} in this archive")
    return docs.InputError(path, file_kind.describe(kind), kind=kind)


def _check_source(source: docs.Source, result: FileResult, *, text: bool) -> None:
    """One extern-kernel file: its op namespaces, its nodes planned by the executor (with the calls
    of its package's wrapper, which decide a torch-written file's call layout as the runner decides
    it at load), and each node's slot counts under that layout (`abi.spec_layout`, as inspect)."""
    import externspec as es
    from externspec.abi.ops import op_namespaces
    from externspec.abi.spec_layout import spec_layout

    from ._ops import load_advice
    from .inspect import namespaces_text

    source.type = es.ExternKernelNodes
    spec = docs.decode(source)
    assert isinstance(spec, es.ExternKernelNodes)
    namespaces = op_namespaces(n.node for n in spec.nodes)
    result.fields["namespaces"] = {**result.fields.get("namespaces", {}), **namespaces}
    if text and spec.nodes:
        print(shown(f"{source.label}: {namespaces_text(namespaces)}"))
    calls = docs.call_lengths(source)
    try:
        executor = es.ProxyExecutor(spec, call_lengths=calls)
    except es.SpecMismatchError as e:
        if e.missing_namespace is None or e.node is None:
            raise
        raise docs.InputError(source.label, load_advice(e, [(n.name, n.node) for n in spec.nodes]),
                              path=f"$.nodes[{e.node}]", kind="spec_mismatch") from None
    decided = spec_layout(spec, calls)
    version = spec.schema_version
    counts = [decided.of(i) for i in range(len(spec.nodes))]
    result.fields["documents"].append({
        "source": source.label, "summary": docs.summary(spec, absent=source.absent),
        "schema_version": f"{version.major}.{version.minor}" if version else None,
        "call_layout": decided.layout.name if decided.layout else None, "call_layout_decided_by": decided.decided_by,
        "nodes": [{"label": plan.label, **({"int_inputs": c.int_inputs, "int_outputs": c.int_outputs,
                                            "tensor_inputs": c.tensor_inputs, "tensor_outputs": c.tensor_outputs}
                                           if c else {"undecided": True})}
                  for plan, c in zip(executor.plans, counts, strict=True)]})
    if not text:
        return
    if not executor.plans:
        print(f"{shown(source.label)}: {docs.summary(spec, absent=source.absent)}")
        return
    origin = f"schema {version.major}.{version.minor}" if version else "no schema_version (torch-written)"
    print(f"{shown(source.label)}: {len(executor)} nodes, {origin}: every node matches its op")
    print(f"  call layout {decided.layout.name if decided.layout else 'undecided'}: {decided.decided_by}")
    for plan, c, i in zip(executor.plans, counts, range(len(counts)), strict=True):
        if c is None:
            both = " or ".join(f"{v.int_inputs} in + {v.int_outputs} returned ({k.name})"
                               for k, v in sorted(decided.candidates[i].items()))
            print(f"  {shown(plan.label)}: ints {both}")
            continue
        print(f"  {shown(plan.label)}: ints {c.int_inputs} in + {c.int_outputs} returned, "
              f"tensors {c.tensor_inputs} in + {c.tensor_outputs} out")


def _cell(verdict: runtimes.Verdict, reasons: list[str]) -> str:
    """`yes`, or `no (N)`: the number of its reason in `reasons`."""
    return "yes" if verdict.reason is None else f"no ({reasons.index(verdict.reason) + 1})"


def _runtimes(path: str, result: FileResult, *, text: bool) -> None:
    """The package's runtimes (`externspec.runtimes`): a table, release by runtime, then each reason once."""
    if not path.endswith(".pt2"):
        raise docs.InputError(path, "--runtimes reads a package (.pt2): a spec alone does not say which C-shim "
                                    "functions its model calls or how its calls lay out")
    verdicts = runtimes.runtimes(path)
    result.fields["runtimes"] = [{"torch": v.release, "runtime": v.runtime, "runs": v.runs, "kind": v.kind,
                                  "reason": v.reason} for v in verdicts]
    cpu = cpu_field(path)  # the release table's verdicts hold on machines with the ISA the package needs
    if cpu is not None:
        result.fields["cpu"] = cpu
    if not text:
        return
    releases = list(dict.fromkeys(v.release for v in verdicts))
    cells = {(v.release, v.runtime): v for v in verdicts}
    reasons = list(dict.fromkeys(v.reason for v in verdicts if v.reason is not None))
    width = max(len(n) for n in runtimes.RUNTIMES.values())
    print(f"{shown(path)}: runtimes, by torch release")
    print((f"  {'':<{width}}  " + "  ".join(f"{r:<6}" for r in releases)).rstrip())
    for key, name in runtimes.RUNTIMES.items():
        row = [_cell(cells[r, key], reasons) for r in releases]
        print((f"  {name:<{width}}  " + "  ".join(f"{c:<6}" for c in row)).rstrip())
    for i, reason in enumerate(reasons, 1):
        print(f"  ({i}) {reason}")
    if cpu is not None:
        print(f"  {shown(cpu_text(cpu))}")
