"""The old import paths of modules that moved into the package's rooms (docs/architecture.md).

Each old path is kept for one release and listed in CHANGELOG.md under Deprecated. Importing one
warns (DeprecationWarning, pointing at the importer) and hands back the new module itself, so old
and new code share one module object and one set of process defaults (`MAX_JSON_BYTES`, caches).
No code in this repository imports an old path (tests/test_layering.py).
"""

from __future__ import annotations

import importlib
import sys
import warnings
from types import ModuleType


def alias_module(old: str, new: str) -> ModuleType:
    """Make the module `old` (being imported) the module `new`: `import old` returns `new`."""
    # stacklevel: 1 is this function, 2 the old module, 3 its importer (importlib's frames are skipped)
    warnings.warn(f"{old} moved to {new}; the old path will be removed in the next release",
                  DeprecationWarning, stacklevel=3)
    module = importlib.import_module(new)
    sys.modules[old] = module
    return module

