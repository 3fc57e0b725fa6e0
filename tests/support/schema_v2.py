"""The worked example of a major bump (tests/compat/test_upgrade.py): a 2.0 variant of the IDL that
renames ExternKernelNode.name to `buffer`, the models generated from it, and the 1 -> 2 upgrader.
The Thrift codec and `externspec upgrade` run it too."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from externspec.codegen import compat, emit_python
from tests.support.paths import IDL
from tests.support.versions import CURRENT_IDL

RENAMED_FROM = "  10: string name;\n  20: Node node;"
RENAMED_TO = "  10: string buffer;\n  20: Node node;"


def v2_idl_text(version: str = '{"major": 2, "minor": 0}') -> str:
    text = IDL.read_text(encoding="utf-8")
    assert text.count(RENAMED_FROM) == 1 and text.count(CURRENT_IDL) == 1
    return text.replace(RENAMED_FROM, RENAMED_TO).replace(CURRENT_IDL, version)


def rename_name_to_buffer(doc: dict[str, Any]) -> dict[str, Any]:
    """The 1 -> 2 upgrader: ExternKernelNode.name became `buffer` (a pure function)."""
    nodes = [{("buffer" if k == "name" else k): v for k, v in n.items()} for n in doc["nodes"]]
    return {**doc, "nodes": nodes}


def v2_models_source(folder: Path) -> str:
    """The Python emitter's models.py for the 2.0 IDL (written to `folder`/v2.thrift, which its
    messages name)."""
    (folder / "v2.thrift").write_text(v2_idl_text(), encoding="utf-8")
    return emit_python.emit(compat.load(folder / "v2.thrift"))["models.py"]


@contextmanager
def v2_models(folder: Path, name: str) -> Iterator[ModuleType]:
    """The 2.0 models, written into `folder` and imported as module `name` while the block runs."""
    path = folder / f"{name}.py"
    path.write_text(v2_models_source(folder), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[name]
