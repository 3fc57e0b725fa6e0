"""Apache Thrift's own compiler and libraries read and write externspec's Thrift files.

For every document of the conformance corpus and real torch-written files, in both protocols, each
Apache Thrift implementation (apache.IMPLEMENTATIONS: Python, pure and accelerated; C++; Node.js;
and thriftpy2) reads externspec's bytes with the types `thrift --gen` makes from schema/externspec.thrift and writes
them back; externspec reads what it wrote (strictly: no unknown field) into the same document.

Apache Thrift's Python and C++ write a struct's fields in field-id order, externspec (as thriftpy2,
Apache's Node.js and torch's JSON) in declaration order: their bytes are equal wherever the two
orders agree, i.e. for documents whose structs declare their fields in id order. GraphModule does not
(torch's ids: 10, 50, 60, 40, 70), so an ExportedProgram's bytes differ in order only. Apache's C++
writes map keys sorted (a std::map): its bytes are those of the same document with sorted keys.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import externspec as es
from externspec import thrift as tc
from externspec.codegen import load_schema
from tests.support.paths import CONFORMANCE

from . import apache


@dataclass(frozen=True)
class Document:
    name: str
    type: type[BaseModel]
    json: bytes


def conformance_documents() -> list[Document]:
    manifest = json.loads((CONFORMANCE / "manifest.json").read_text())["valid"]
    return [Document(name, getattr(es, type_name), (CONFORMANCE / "valid" / name).read_bytes())
            for name, type_name in sorted(manifest.items())]


def torch_documents() -> list[Document]:
    """torch.export's model.json of each exported test model, AOTInductor's extern-kernel file."""
    from tests.support import artifacts

    return [
        *(Document(f"export_{name}/model.json", es.ExportedProgram,
                   artifacts.read_member(artifacts.exported_program(name), "models/model.json"))
          for name in sorted(artifacts.EXPORT_MODELS)),
        Document("aoti_custom_ops/wrapper.json", es.ExternKernelNodes,
                 artifacts.read_member(artifacts.aoti_package(), ".wrapper.json")),
    ]


CORPORA: dict[str, Callable[[], list[Document]]] = {"conformance": conformance_documents, "torch": torch_documents}


@functools.cache
def _ids_in_declaration_order(type_name: str) -> bool:
    """Whether every struct a `type_name` document can hold declares its fields in id order (union
    members need not: one is written)."""
    schema = load_schema(str(apache.IDL))
    seen: set[str] = set()
    todo = [type_name]
    while todo:
        t = schema.get(todo.pop())
        if t is None or t.name in seen or t.kind == "enum":
            continue
        seen.add(t.name)
        ids = [f.id for f in t.fields]
        if t.kind == "struct" and ids != sorted(ids):
            return False
        todo.extend(n for f in t.fields for n in f.type.named_types())
    return True


class Rewritten:
    """What each implementation wrote back for each (document, protocol) of a corpus: computed once
    per implementation and corpus, in one batch (one process for C++ and Node.js)."""

    def __init__(self, work: Path):
        self.work = work
        self.done: dict[tuple[str, str], dict[tuple[str, str], bytes]] = {}

    def get(self, implementation: str, corpus: str) -> dict[tuple[str, str], bytes]:
        if (implementation, corpus) not in self.done:
            self.done[implementation, corpus] = self._rewrite(implementation, corpus)
        return self.done[implementation, corpus]

    def _rewrite(self, implementation: str, corpus: str) -> dict[tuple[str, str], bytes]:
        work = self.work / implementation / corpus
        work.mkdir(parents=True)
        jobs = {}
        for i, doc in enumerate(CORPORA[corpus]()):
            model = es.loads(doc.json, doc.type)
            for protocol in tc.PROTOCOLS:
                source = work / f"{i}.{protocol}.ours"
                source.write_bytes(tc.dumps(model, protocol))
                jobs[doc.name, protocol] = apache.Job(doc.type.__name__, protocol, source,
                                                      work / f"{i}.{protocol}.theirs")
        apache.rewrite(implementation, list(jobs.values()), work)
        return {key: job.target.read_bytes() for key, job in jobs.items()}


@pytest.fixture(scope="module")
def rewritten(tmp_path_factory: pytest.TempPathFactory) -> Rewritten:
    return Rewritten(tmp_path_factory.mktemp("apache_thrift"))


def _canonical(tree: Any) -> str:
    """A document's plain data as text: equal texts are equal documents (a map's key order aside,
    which a Thrift map does not have; -0.0 is not 0.0)."""
    return json.dumps(tree, sort_keys=True)


def _negative_zero_to_zero(tree: Any) -> Any:
    if isinstance(tree, float) and tree == 0.0:
        return 0.0
    if isinstance(tree, list):
        return [_negative_zero_to_zero(v) for v in tree]
    if isinstance(tree, dict):
        return {k: _negative_zero_to_zero(v) for k, v in tree.items()}
    return tree


def _bools_in_lists_to_false(tree: Any) -> Any:
    if isinstance(tree, list):
        return [False if isinstance(v, bool) else _bools_in_lists_to_false(v) for v in tree]
    if isinstance(tree, dict):
        return {k: _bools_in_lists_to_false(v) for k, v in tree.items()}
    return tree


# Defects of an implementation under test, as what it does to a document (per protocol). The test
# checks that a document a defect changes is still changed: drop the entry once a fixed release is pinned.
KNOWN_DEFECTS: dict[tuple[str, str], tuple[Callable[[Any], Any], ...]] = {
    # npm thrift 0.24.0 (lib/nodejs/lib/thrift/): writeDouble (binary.js, both protocols) takes the
    # sign from `v < 0`, so -0.0 is written as 0.0; TCompactProtocol.readBool reads a bool that is not
    # a field's (an element of a list) as `res.value` of the byte it read, a number: always false.
    ("node", "binary"): (_negative_zero_to_zero,),
    ("node", "compact"): (_negative_zero_to_zero, _bools_in_lists_to_false),
}


def check(rewritten: Rewritten, implementation: str, corpus: str, doc: Document, protocol: str) -> None:
    model = es.loads(doc.json, doc.type)
    theirs = rewritten.get(implementation, corpus)[doc.name, protocol]
    tree = json.loads(es.dumps(model))
    expected = _canonical(tree)
    back = _canonical(json.loads(es.dumps(tc.loads(theirs, doc.type, protocol, strict=True))))
    damaged = tree
    for defect in KNOWN_DEFECTS.get((implementation, protocol), ()):
        damaged = defect(damaged)
    if _canonical(damaged) != expected:
        assert back != expected, f"{implementation} lost a known defect: update KNOWN_DEFECTS"
        assert back == _canonical(damaged)
        return
    assert back == expected
    if implementation not in apache.WRITES_FIELDS_IN_ID_ORDER or _ids_in_declaration_order(doc.type.__name__):
        if implementation in apache.SORTS_MAP_KEYS:
            model = es.loads(expected, doc.type)
        assert theirs == tc.dumps(model, protocol)


@pytest.mark.parametrize("protocol", tc.PROTOCOLS)
@pytest.mark.parametrize("doc", conformance_documents(), ids=lambda d: d.name)
@pytest.mark.parametrize("implementation", apache.IMPLEMENTATIONS)
def test_apache_thrift_rewrites_the_conformance_corpus(rewritten: Rewritten, implementation: str, doc: Document,
                                                       protocol: str) -> None:
    check(rewritten, implementation, "conformance", doc, protocol)


@pytest.mark.slow
@pytest.mark.parametrize("protocol", tc.PROTOCOLS)
@pytest.mark.parametrize("implementation", apache.IMPLEMENTATIONS)
def test_apache_thrift_rewrites_torch_written_files(rewritten: Rewritten, implementation: str, protocol: str) -> None:
    for doc in torch_documents():
        check(rewritten, implementation, "torch", doc, protocol)


def test_field_order_differs_only_where_a_struct_declares_ids_out_of_order() -> None:
    assert not _ids_in_declaration_order("ExportedProgram")
    assert all(_ids_in_declaration_order(t) for t in ("ExternKernelNodes", "Node", "Graph", "Device", "TensorMeta"))

