"""Schema 1.2's fields (`ExternKernelNodes.call_layout`, `producer`) under the version policy
(docs/versioning.md): a 1.1 reader, the models generated from schema/history/v1.1.thrift, refuses a
1.2 document that sets one, naming the key and both versions, and reads one that sets neither."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from types import ModuleType

import pytest

import externspec as es
from externspec.codegen import compat, emit_python
from tests.support.paths import REPO

V11 = "externspec_test_v11_reader"


@pytest.fixture(scope="module")
def v11(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    out = tmp_path_factory.mktemp("v11")
    (out / f"{V11}.py").write_text(emit_python.emit(compat.load(REPO / "schema/history/v1.1.thrift"))["models.py"],
                                   encoding="utf-8")
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module(V11)
    finally:
        sys.path.remove(str(out))
        sys.modules.pop(V11, None)


@pytest.mark.parametrize(("key", "value"), [("call_layout", 2), ("producer", '"externspec 0.1.0 (torch 2.13.0)"')])
def test_a_1_1_reader_refuses_a_1_2_field_naming_it(v11: ModuleType, key: str, value: str) -> None:
    text = f'{{"nodes": [], "schema_version": {{"major": 1, "minor": 2}}, "{key}": {value}}}'
    assert es.loads(text, es.ExternKernelNodes).model_dump()[key] is not None  # this reader: 1.2
    with pytest.raises(es.VersionError) as info:
        es.loads(text, v11.ExternKernelNodes)
    assert info.value.key == key
    assert f"key `{key}` is unknown to schema 1.1; the document was written with schema 1.2" in str(info.value)


def test_a_1_1_reader_reads_a_1_2_document_without_them(v11: ModuleType) -> None:
    doc = es.loads('{"nodes": [], "schema_version": {"major": 1, "minor": 2}}', v11.ExternKernelNodes)
    assert (doc.schema_version.major, doc.schema_version.minor) == (1, 2)
