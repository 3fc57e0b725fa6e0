"""The one cache directory for compiled C++ and compiled models (tests, demo, benchmarks)."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_ROOT = Path(__file__).resolve().parent.parent.parent


def cache_dir() -> Path:
    """`$EXTERNSPEC_CACHE_DIR`, else `.cache/` of a source checkout, else `~/.cache/externspec`."""
    env = os.environ.get("EXTERNSPEC_CACHE_DIR")
    if env:
        return Path(env)
    if (_PACKAGE_ROOT / "pyproject.toml").exists():
        return _PACKAGE_ROOT / ".cache"
    return Path.home() / ".cache" / "externspec"
