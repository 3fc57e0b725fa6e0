"""`externspec inspect FILE...`: the nodes of each document as a table, with their call-ABI slot counts.

`--format json` gives the same for programs (`describe`), `--format github` only the problems."""

from __future__ import annotations

import argparse
import enum
import json
import math
import sys
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

import externspec as es
from externspec._modelbase import Union as UnionModel

from . import _documents as docs
from . import _ops
from ._cpu import cpu_field, cpu_text
from ._report import FileResult, Problem, Reporter, add_format_arguments, problems_of
from ._terminal import Painter, shown, table, terminal_width

if TYPE_CHECKING:
    from externspec.abi.layout import ArgLayout, NodeLayout
    from externspec.abi.ops import SchemaCache
    from externspec.abi.spec_layout import SpecLayout

NAME = "inspect"
HELP = "show the nodes of a document (index, target, arguments, slot counts) and its schema version"

HEADERS = ("IDX", "TARGET", "ARGUMENT", "MEMBER", "VALUE", "SLOTS")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="JSON, Thrift binary/compact, or .pt2 files ('-': stdin)")
    p.add_argument("--type", choices=list(docs.DOCUMENT_TYPES), help="document type (default: detected)")
    p.add_argument("--from", dest="from_", choices=docs.FORMATS, metavar="{json,binary,compact}",
                   help="input format (default: from the extension, else sniffed)")
    p.add_argument("--load", action="append", default=[], metavar="OPS",
                   help="register custom ops first, so their slots can be counted: a .so library, a .py file "
                        "or a module name (repeatable)")
    p.add_argument("--no-slots", action="store_true", help="do not import torch to count slots")
    add_format_arguments(p)


def run(args: argparse.Namespace) -> int:
    if not _ops.register_ops(args.load, "inspect"):
        return 1
    reporter = Reporter(args.output_format)
    paint = Painter(sys.stdout)
    width = terminal_width(sys.stdout)
    printed = 0
    for path in args.files:
        result = FileResult(path, fields={"documents": []})
        label = path
        try:
            documents = []
            for source in docs.read_sources(path, format=args.from_, type_name=args.type):
                label = source.label
                model = docs.decode(source)
                if _nodes(model) is not None:
                    documents.append((source.label, model, source.absent, docs.call_lengths(source)))
            if not documents:
                label = path
                raise docs.InputError(path, "no document with nodes (PayloadConfig only)")
        except (es.DecodeError, es.VersionError, docs.InputError) as e:
            result.errors += problems_of(e, label=label, file=path)
            if reporter.text:
                print(f"externspec inspect: {shown(str(e))}", file=sys.stderr)
            reporter.add(result)
            continue
        described = [describe(label, model, slots=not args.no_slots, absent=absent, call_lengths=calls)
                     for label, model, absent, calls in documents]
        result.fields["documents"] = described
        cpu = _cpu(path, result)
        for doc in described:
            if "call_layout_refused" in doc:
                refusal = doc["call_layout_refused"]
                node = refusal["node"]
                result.errors.append(Problem("spec_mismatch", "$" if node is None else f"$.nodes[{node}]",
                                             refusal["message"], source=doc["source"]))
        reporter.add(result)
        if reporter.text:
            printed = _print(described, cpu, paint, width, printed)
    return reporter.finish()


def _print(described: list[dict[str, Any]], cpu: dict[str, Any] | None, paint: Painter, width: int | None,
           printed: int) -> int:
    """One file's documents as text (and the CPU its package needs); returns the documents printed so far."""
    for doc in described:
        if printed:
            print()
        printed += 1
        print(paint(shown(doc["source"]), "bold"))
        if not doc["nodes"]:  # a spec of no extern calls: nothing to tabulate
            print(doc["summary"])
            continue
        print(f"{doc['type']}, {doc['schema_version_text']}, {len(doc['nodes'])} node"
              f"{'s' if len(doc['nodes']) != 1 else ''}")
        if any("layouts" in node for node in doc["nodes"]):  # only where the layout changes a count
            print(f"call layout {doc['call_layout'] or 'undecided'}: {doc['call_layout_decided_by']}")
        print()
        print("\n".join(table(HEADERS, _rows(doc["nodes"]), width=width, shrink=4, paint=paint)))
        for node in doc["nodes"]:
            if node["slots_refused"]:
                print(shown(node["slots_refused"]))
        if "call_layout_refused" in doc:
            print(shown(f"the runner refuses this package: {doc['call_layout_refused']['message']}"))
        print(shown(f"ops called: {', '.join(doc['ops'])}"))
        if "namespaces" in doc:
            print(shown(namespaces_text(doc["namespaces"])))
    if cpu is not None:
        print(shown(cpu_text(cpu)))
    return printed


def _cpu(path: str, result: FileResult) -> dict[str, Any] | None:
    """The CPU a package at `path` was compiled for, recorded in `result` (None: not a package)."""
    try:
        cpu = cpu_field(path)
    except es.PackageError as e:
        result.errors += problems_of(e, label=path, file=path)
        return None
    if cpu is not None:
        result.fields["cpu"] = cpu
    return cpu


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


def describe(label: str, model: BaseModel, *, slots: bool = True, absent: bool = False,
             call_lengths: tuple[tuple[int, int, int], ...] | None = None) -> dict[str, Any]:
    """The machine-readable form of one document (an entry of `--format json`'s `documents`):
    argument values as their wire JSON (`value`) and as the table shows them (`text`), slots as
    `{"kind", "count"}` from the executors' own layout (None where the executors refuse the node,
    `slots_refused` saying why). An extern-kernel file is laid out under the call layout its
    package decides (`abi.spec_layout`: stated, or decided by the wrapper's calls, `call_lengths`,
    as the runner decides at load); `call_layout` and `call_layout_decided_by` say which and how, and
    a node whose two candidate layouts differ lists both (`layouts`; `slots` None while undecided)."""
    cache = _schema_cache() if slots else None
    decided = _spec_layout(model, call_lengths, cache)
    nodes = []
    for index, (name, node) in enumerate(_nodes(model) or []):
        layout, shown_layout, refused = _node_layouts(index, name, node, decided, cache)
        placed = {a.name: a for a in shown_layout.args} if shown_layout else {}
        inputs = [_argument(a.name, a.arg, placed.get(a.name)) for a in node.inputs]
        # Omitted arguments that still take slots: kwarg-only defaults the calls pass.
        passed = [_argument(a.name, a.arg, a) for a in placed.values() if not a.given and a.arg and a.count]
        outputs = [{"member": o.type, "value": wire_value(o), "text": value_text(o.value)} for o in node.outputs]
        entry: dict[str, Any] = {"index": index, "name": name, "target": node.target, "inputs": inputs,
                 "passed_defaults": passed, "outputs": outputs, "slots": _counts(layout) if layout else None,
                 "slots_refused": refused}
        if decided is not None and index in decided.candidates:
            entry["layouts"] = {k.name: _counts(v) for k, v in sorted(decided.candidates[index].items())}
        nodes.append(entry)
    out = {
        "source": label,
        "type": type(model).__name__,
        "schema_version": docs.facts(model)["schema_version"],
        "schema_version_text": docs.schema_version_text(model),
        "summary": docs.summary(model, absent=absent),
        "nodes": nodes,
    }
    if decided is not None:
        out["call_layout"] = decided.layout.name if decided.layout else None
        out["call_layout_decided_by"] = decided.decided_by
        if decided.refused is not None:  # the wrapper's calls fit no layout: the runner refuses the package
            out["call_layout_refused"] = {"node": decided.refused.node, "message": str(decided.refused)}
    out["ops"] = sorted({node.target for _, node in _nodes(model) or []})  # what a runtime must provide
    if slots:  # torch is imported: say which op namespaces this process lacks
        from externspec.abi.ops import op_namespaces

        out["namespaces"] = op_namespaces(node for _, node in _nodes(model) or [])
    return out


def _spec_layout(model: BaseModel, call_lengths: tuple[tuple[int, int, int], ...] | None,
                 cache: SchemaCache | None) -> SpecLayout | None:
    """An extern-kernel file's layout as its package decides it (None: another document, or no slots)."""
    if cache is None or not isinstance(model, es.ExternKernelNodes):
        return None
    from externspec.abi.spec_layout import spec_layout

    return spec_layout(model, call_lengths, cache)


def _node_layouts(index: int, name: str | None, node: es.Node, decided: SpecLayout | None,
                  cache: SchemaCache | None) -> tuple[NodeLayout | None, NodeLayout | None, str | None]:
    """(the node's layout, the layout its arguments are shown by, why the executors refuse it): an
    undecided node has no layout and shows its candidate that passes the omitted defaults."""
    if cache is None:
        return None, None, None
    if decided is None:  # an exported program's or a single node's: laid out as it names its arguments
        layout, refused = _layout(index, name, node, cache)
        return layout, layout, refused
    found = decided.nodes[index]
    if isinstance(found, es.SpecMismatchError):
        return None, None, _ops.load_advice(found, {index: (name, node)})
    layout = decided.of(index)
    return layout, layout or found, None


def _schema_cache() -> SchemaCache:
    from externspec.abi.ops import SchemaCache  # imports torch

    return SchemaCache()


def _layout(index: int, name: str | None, node: es.Node,
            cache: SchemaCache) -> tuple[NodeLayout | None, str | None]:
    """(the node's NODE_ARGUMENTS layout, None), or (None, why the executors refuse it)."""
    from externspec.abi.layout import node_layout

    try:
        return node_layout(node, layout=es.CallLayout.NODE_ARGUMENTS, index=index, name=name, cache=cache), None
    except es.SpecMismatchError as exc:
        return None, _ops.load_advice(exc, {index: (name, node)})


def _argument(name: str, arg: UnionModel, placed: ArgLayout | None) -> dict[str, Any]:
    return {"name": name, "member": arg.type, "value": wire_value(arg), "text": value_text(arg.value),
            "slots": {"kind": placed.kind, "count": placed.count} if placed else None}


def _counts(layout: NodeLayout) -> dict[str, int]:
    return {"static": layout.static, "int_inputs": layout.int_inputs, "tensor_inputs": layout.tensor_inputs,
            "int_outputs": layout.int_outputs, "tensor_outputs": layout.tensor_outputs}


def _slots_text(slots: dict[str, Any] | None) -> str:
    """`tensor`, `3 ints`, `static`, `default`, or nothing where the node has no layout."""
    if slots is None:
        return ""
    kind, count = slots["kind"], slots["count"]
    if kind in ("tensor", "int"):
        return kind if count == 1 else f"{count} {kind}s"
    return str(kind)


def namespaces_text(namespaces: dict[str, bool]) -> str:
    """`op namespaces: aten (registered), my_ops (not registered)` (also check-spec's line)."""
    listed = ", ".join(f"{ns} ({'registered' if ok else 'not registered'})" for ns, ok in namespaces.items())
    missing = "" if all(namespaces.values()) else "; load the libraries of those not registered first (--load)"
    return f"op namespaces: {listed or 'none'}{missing}"


def _rows(nodes: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for node in nodes:
        summary = _node_summary(node)
        lines = [[a["name"], a["member"], a["text"], _slots_text(a["slots"])] for a in node["inputs"]]
        default = "(default, if passed)" if node["slots"] is None else "(default)"  # undecided: one candidate's
        lines += [[a["name"], f"{a['member']} {default}", a["text"], _slots_text(a["slots"])]
                  for a in node["passed_defaults"]]
        lines += [[f"-> {i}", o["member"], o["text"], ""] for i, o in enumerate(node["outputs"])]
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
    if s is None and node.get("layouts"):
        return "  ints " + " or ".join(f"{c['int_inputs']}+{c['int_outputs']}" for c in node["layouts"].values()) \
            + " (undecided)"
    if s is None:
        return "  slots: refused (see below)" if node["slots_refused"] else ""
    return (f"  static {s['static']} · ints {s['int_inputs']}+{s['int_outputs']}"
            f" · tensors {s['tensor_inputs']}+{s['tensor_outputs']}")


def wire_value(arg: UnionModel) -> Any:
    """The set member's value as the wire writes it (numbers as JSON numbers, tensors as objects)."""
    return json.loads(es.dumps(arg))[arg.type]


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
