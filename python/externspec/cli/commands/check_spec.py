"""`externspec check-spec FILE...`: validate extern-kernel specs against the ops registered here.

Each FILE is a spec (`*.json`, externspec- or torch-written) or an AOTInductor package (`*.pt2`,
whose `*.wrapper.json` is checked). The ops a spec names must be registered first: `--load OPS`
loads a C++ op library (`.so`), runs a Python file (`.py`) or imports a module that defines them,
as `inspect --load` does. Prints the op namespaces each spec needs and whether this process has
registered them, then one line per node (its call plan); exits 1 when a file is bad or
a node does not match its op. Needs torch. `--format json|github`: the same for programs and CI.
"""

from __future__ import annotations

import argparse
import sys

from ... import aoti
from . import _documents as docs
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
    add_format_arguments(parser)


def run(args: argparse.Namespace) -> int:
    reporter = Reporter(args.output_format)
    try:
        import torch  # noqa: F401  (the executor checks nodes against torch's op registry)
    except ImportError:
        message = "needs torch, which is not installed (pip install 'externspec[torch]')"
        print(f"externspec check-spec: {message}", file=sys.stderr)
        return 1 if reporter.text else reporter.fail_all(args.files, "setup", message)
    import externspec as es
    from externspec.abi.ops import op_namespaces

    from . import _ops
    from .inspect import namespaces_text

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
                raise docs.InputError(path, f"no {aoti.EXTERN_KERNELS} in this archive")
            for source in specs:
                label = source.label
                source.type = es.ExternKernelNodes
                spec = docs.decode(source)
                assert isinstance(spec, es.ExternKernelNodes)
                namespaces = op_namespaces(n.node for n in spec.nodes)
                result.fields["namespaces"] = {**result.fields.get("namespaces", {}), **namespaces}
                if reporter.text and spec.nodes:
                    print(shown(f"{source.label}: {namespaces_text(namespaces)}"))
                executor = es.ProxyExecutor(spec)
                version = spec.schema_version
                origin = (f"schema {version.major}.{version.minor}" if version
                          else "no schema_version (torch-written)")
                result.fields["documents"].append({
                    "source": source.label, "summary": docs.summary(spec, absent=source.absent),
                    "schema_version": f"{version.major}.{version.minor}" if version else None,
                    "nodes": [{"label": plan.label, "int_inputs": plan.layout.int_inputs,
                               "int_outputs": plan.layout.int_outputs, "tensor_inputs": plan.layout.tensor_inputs,
                               "tensor_outputs": plan.layout.tensor_outputs}
                              for plan in executor.plans]})
                if not reporter.text:
                    continue
                if not executor.plans:
                    print(f"{shown(source.label)}: {docs.summary(spec, absent=source.absent)}")
                    continue
                print(f"{shown(source.label)}: {len(executor)} nodes, {origin}: every node matches its op")
                for plan in executor.plans:
                    layout = plan.layout
                    print(f"  {shown(plan.label)}: ints {layout.int_inputs} in + {layout.int_outputs} returned, "
                          f"tensors {layout.tensor_inputs} in + {layout.tensor_outputs} out")
        except (es.ExternSpecError, docs.InputError) as exc:
            result.errors += problems_of(exc, label=label, file=path)
            if reporter.text:
                print(f"externspec check-spec: {shown(str(exc))}", file=sys.stderr)
        reporter.add(result)
    return reporter.finish()
