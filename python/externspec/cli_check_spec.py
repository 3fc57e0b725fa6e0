"""`externspec check-spec FILE`: validate an extern-kernel spec against the ops registered here.

FILE is a spec (`*.json`, externspec- or torch-written) or an AOTInductor package (`*.pt2`, whose
`*.wrapper.json` is checked). The ops the spec names must be registered first: `--import MODULE`
imports a Python module that defines them, `--load-library PATH` loads a C++ op library. Prints
one line per node (its call plan); exits 1 with the error when a node does not match its op.
"""

from __future__ import annotations

import argparse
import importlib
import zipfile

NAME = "check-spec"
HELP = "validate an extern-kernel spec (.json or AOTInductor .pt2) against the registered ops"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="spec JSON file or AOTInductor package (.pt2)")
    parser.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                        help="import MODULE first (it registers custom ops); repeatable")
    parser.add_argument("--load-library", dest="libraries", action="append", default=[], metavar="PATH",
                        help="torch.ops.load_library(PATH) first; repeatable")


def run(args: argparse.Namespace) -> int:
    import torch

    import externspec as es
    from externspec import aoti

    try:
        for path in args.libraries:
            torch.ops.load_library(path)
        for module in args.imports:
            importlib.import_module(module)
    except (ImportError, OSError, RuntimeError) as exc:
        print(f"externspec check-spec: cannot register ops: {type(exc).__name__}: {exc}")
        return 1
    try:
        if zipfile.is_zipfile(args.file):
            spec = aoti.read_package(args.file).nodes
        else:
            spec = es.load(args.file, es.ExternKernelNodes)
        executor = es.ProxyExecutor(spec)
    except (es.ExternSpecError, OSError) as exc:
        print(f"externspec check-spec: {exc}")
        return 1
    version = spec.schema_version
    origin = f"schema {version.major}.{version.minor}" if version else "no schema_version (torch-written)"
    print(f"{args.file}: {len(executor)} nodes, {origin}: every node matches its op")
    for plan in executor.plans:
        print(f"  {plan.label}: ints {plan.num_input_ints} in + {plan.num_ints - plan.num_input_ints} returned, "
              f"tensors {plan.num_input_tensors} in + {plan.num_tensors - plan.num_input_tensors} out")
    return 0
