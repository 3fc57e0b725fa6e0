"""`externspec inspect FILE`: the nodes of a document as a table, with their call-ABI slot counts."""

from __future__ import annotations

import argparse
import enum
import json
import math
import sys
from typing import Any

from pydantic import BaseModel

import externspec as es
from externspec._modelbase import Union as UnionModel

from . import _documents as docs
from . import _slots
from ._terminal import Painter, table, terminal_width

NAME = "inspect"
HELP = "show the nodes of a document (index, target, arguments, slot counts) and its schema version"

HEADERS = ("IDX", "TARGET", "ARGUMENT", "MEMBER", "VALUE", "SLOTS")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="JSON, Thrift binary/compact, or .pt2 file")
    p.add_argument("--json", action="store_true", help="print JSON for machines instead of a table")
    p.add_argument("--type", choices=list(docs.DOCUMENT_TYPES), help="document type (default: detected)")
    p.add_argument("--format", choices=docs.FORMATS, help="file format (default: from the extension)")
    p.add_argument("--load", action="append", default=[], metavar="OPS",
                   help="register custom ops first, so their slots can be counted: a .so library, a .py file "
                        "or a module name (repeatable)")
    p.add_argument("--no-slots", action="store_true", help="do not import torch to count slots")


def run(args: argparse.Namespace) -> int:
    if not _slots.register_ops(args.load, "inspect"):
        return 1
    try:
        documents = []
        for source in docs.read_sources(args.file, format=args.format, type_name=args.type):
            model = docs.decode(source)
            if _nodes(model) is not None:
                documents.append((source.label, model))
    except (es.DecodeError, es.VersionError, docs.InputError) as e:
        print(f"externspec inspect: {e}", file=sys.stderr)
        return 1
    if not documents:
        print(f"externspec inspect: {args.file}: no document with nodes (PayloadConfig only)", file=sys.stderr)
        return 1
    described = [describe(label, model, slots=not args.no_slots) for label, model in documents]
    if args.json:
        print(json.dumps(described if len(described) > 1 else described[0], indent=2))
        return 0
    paint = Painter(sys.stdout)
    width = terminal_width(sys.stdout)
    for n, doc in enumerate(described):
        if n:
            print()
        print(paint(doc["source"], "bold"))
        print(f"{doc['type']}, {doc['schema_version_text']}, {len(doc['nodes'])} node"
              f"{'s' if len(doc['nodes']) != 1 else ''}")
        print()
        print("\n".join(table(HEADERS, _rows(doc["nodes"]), width=width, shrink=4, paint=paint)))
    return 0


def _nodes(model: BaseModel) -> list[tuple[str | None, es.Node]] | None:
    """(buffer name, node) pairs, or None for documents without nodes."""
    if isinstance(model, es.ExternKernelNodes):
        return [(n.name, n.node) for n in model.nodes]
    if isinstance(model, es.ExportedProgram):
        return [(n.name, n) for n in model.graph_module.graph.nodes]
    if isinstance(model, es.ExternKernelNode):
        return [(model.name, model.node)]
    if isinstance(model, es.Node):
        return [(model.name, model)]
    return None


def describe(label: str, model: BaseModel, *, slots: bool = True) -> dict[str, Any]:
    """The machine-readable form of `inspect` (what `--json` prints)."""
    version = getattr(model, "schema_version", None)
    nodes = []
    for index, (name, node) in enumerate(_nodes(model) or []):
        counted = _slots.node_slots(node) if slots else None
        per_input = counted[1] if counted else [None] * len(node.inputs)
        inputs = [
            {"name": a.name, "member": a.arg.type, "value": value_text(a.arg.value),
             "slots": s.text() if s else None}
            for a, s in zip(node.inputs, per_input, strict=True)
        ]
        outputs = [{"member": o.type, "value": value_text(o.value)} for o in node.outputs]
        nodes.append({"index": index, "name": name, "target": node.target, "inputs": inputs,
                      "outputs": outputs, "slots": counted[0].as_dict() if counted else None})
    return {
        "source": label,
        "type": type(model).__name__,
        "schema_version": f"{version.major}.{version.minor}" if version is not None else None,
        "schema_version_text": docs.schema_version_text(model),
        "nodes": nodes,
    }


def _rows(nodes: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for node in nodes:
        summary = _node_summary(node)
        lines = [[a["name"], a["member"], a["value"], a["slots"] or ""] for a in node["inputs"]]
        lines += [[f"-> {i}", o["member"], o["value"], ""] for i, o in enumerate(node["outputs"])]
        if not lines:
            lines = [["", "", "", ""]]
        for k, line in enumerate(lines):
            head = [str(node["index"]), node["target"]] if k == 0 else ["", summary if k == 1 else ""]
            rows.append(head + line)
        if len(lines) == 1:
            rows.append(["", summary, "", "", "", ""])
    return rows


def _node_summary(node: dict[str, Any]) -> str:
    s = node["slots"]
    if s is None:
        return "  slots: op not in torch"
    return (f"  static {s['static']} · ints {s['int_inputs']}+{s['int_outputs']}"
            f" · tensors {s['tensor_inputs']}+{s['tensor_outputs']}")


def value_text(value: Any) -> str:
    """A compact, readable rendering of an argument value: tensor names bare, lists in brackets."""
    if isinstance(value, es.TensorArgument | es.TokenArgument):
        return value.name
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.IntEnum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(value_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {value_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, UnionModel):
        return value_text(value.value) if value.type != "as_none" else "None"
    if isinstance(value, es.Device):
        return value.type if value.index is None else f"{value.type}:{value.index}"
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return str(value)
