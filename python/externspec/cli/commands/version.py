"""`externspec version`: the package version, the schema version and the IDL checksum."""

from __future__ import annotations

import argparse
import json

import externspec as es

NAME = "version"
HELP = "print the package version, the schema version and the IDL checksum"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON for machines")


def run(args: argparse.Namespace) -> int:
    v = es.SCHEMA_VERSION
    info = {
        "externspec": es.__version__,
        "schema_version": f"{v.major}.{v.minor}",
        "idl_checksum": es.IDL_CHECKSUM,
        "torch_export_schema_major": es.TORCH_EXPORT_SCHEMA_MAJOR,
    }
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    rows = [("externspec", info["externspec"]), ("schema version", info["schema_version"]),
            ("IDL checksum", f"sha256:{info['idl_checksum']}"),
            ("torch export schema major", str(info["torch_export_schema_major"]))]
    width = max(len(k) for k, _ in rows)
    for k, val in rows:
        print(f"{k.ljust(width)}  {val}")
    return 0
