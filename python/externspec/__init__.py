"""externspec: the versioned contract between AOT-compiled PyTorch code and its extern kernels.

The models are generated from schema/externspec.thrift; `loads`/`dumps` speak torch 2.13's JSON
(docs/wire-format.md). `import externspec` needs pydantic only: the exporter (`SpecBuilder`,
`CallSite`), the Python executor (`ProxyExecutor`) and the C++ executor (`cpp`) import torch on
first access, so the command line and the wire format start fast with or without torch.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING

from ._generated.models import *  # noqa: F403
from ._generated.models import IDL_CHECKSUM, SCHEMA_VERSION
from ._generated.models import __all__ as _model_names
from .errors import (
    CallError,
    DecodeError,
    ExternSpecError,
    ModelError,
    PackageError,
    SpecMismatchError,
    UnionAccessError,
    UnsupportedError,
    VersionError,
)
from .wire import MAX_JSON_DEPTH, Limits, dump, dumps, load, loads

if TYPE_CHECKING:
    from . import cpp as cpp
    from .abi.exporter import CallSite as CallSite
    from .abi.exporter import SpecBuilder as SpecBuilder
    from .abi.proxy_executor import ProxyExecutor as ProxyExecutor
    from .cpp_include import get_include as get_include

from ._version import __version__ as __version__

# name -> (module, attribute or None for the module itself, whether it needs torch)
_LAZY: dict[str, tuple[str, str | None, bool]] = {
    "SpecBuilder": (".abi.exporter", "SpecBuilder", True),
    "CallSite": (".abi.exporter", "CallSite", True),
    "ProxyExecutor": (".abi.proxy_executor", "ProxyExecutor", True),
    "cpp": (".cpp", None, True),
    "get_include": (".cpp_include", "get_include", False),
}

_TORCH_NAMES = ["CallSite", "ProxyExecutor", "SpecBuilder"]

__all__ = [
    *_model_names,
    "IDL_CHECKSUM",
    "MAX_JSON_DEPTH",
    "Limits",
    "SCHEMA_VERSION",
    "CallError",
    "DecodeError",
    "ExternSpecError",
    "ModelError",
    "PackageError",
    "SpecMismatchError",
    "UnionAccessError",
    "UnsupportedError",
    "VersionError",
    "dump",
    "dumps",
    "get_include",
    "load",
    "loads",
    # `from externspec import *` exports the torch-backed names only where torch is installed
    *(_TORCH_NAMES if importlib.util.find_spec("torch") is not None else []),
]


def __getattr__(name: str) -> object:
    """Import the torch-backed parts on first access, and say plainly when torch is missing."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module_name, attribute, needs_torch = _LAZY[name]
    try:
        module = importlib.import_module(module_name, __name__)
    except ModuleNotFoundError as e:
        if not needs_torch or e.name != "torch":
            raise
        raise ImportError(f"externspec.{name} needs torch, which is not installed "
                          f"(pip install 'externspec[torch]')", name="torch") from None
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
