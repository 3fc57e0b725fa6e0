"""Real torch-written documents for the C++ tests, as files: extracted from the shared, cached
artifacts of tests/support/artifacts.py (one AOTInductor compile per machine, not per test).

* `wrapper_json()`: AOTInductor's extern-kernel file of the CustomOps model (torch.library custom
  ops, which AOTInductor calls through the proxy executor).
* `model_json(name)`: torch.export's models/model.json of one of artifacts.EXPORT_MODELS
  (`custom_ops` has symbolic sizes, `cond` nested graphs).
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.support import artifacts

CACHE = artifacts.CACHE.parent / "torch_docs"


def _extract(archive: Path, suffix: str, name: str) -> Path:
    path = CACHE / name
    data = artifacts.read_member(archive, suffix)
    if not path.exists() or path.read_bytes() != data:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return path


def wrapper_json() -> Path:
    return _extract(artifacts.aoti_package(), ".wrapper.json", "wrapper.json")


def model_json(name: str = "custom_ops") -> Path:
    return _extract(artifacts.exported_program(name), "models/model.json", f"model_{name}.json")
