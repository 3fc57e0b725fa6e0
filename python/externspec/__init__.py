"""externspec: the versioned contract between AOT-compiled PyTorch code and its extern kernels.

The models are generated from schema/externspec.thrift; `loads`/`dumps` speak torch 2.13's JSON.
"""

from ._generated.models import *  # noqa: F403
from ._generated.models import IDL_CHECKSUM, SCHEMA_VERSION
from ._generated.models import __all__ as _model_names
from .cpp_include import get_include
from .errors import (
    CallError,
    DecodeError,
    ExternSpecError,
    ModelError,
    PackageError,
    SpecMismatchError,
    UnsupportedError,
    VersionError,
)
from .wire import MAX_JSON_DEPTH, dump, dumps, load, loads

try:  # the exporter and executor need torch; the models and wire format do not
    from .export import CallSite, SpecBuilder
    from .runtime import ProxyExecutor
except ImportError as _exc:  # pragma: no cover - exercised only without torch
    if _exc.name != "torch":
        raise

__version__ = "0.1.0"

__all__ = [
    *_model_names,
    "IDL_CHECKSUM",
    "MAX_JSON_DEPTH",
    "SCHEMA_VERSION",
    "CallError",
    "CallSite",
    "DecodeError",
    "ExternSpecError",
    "ModelError",
    "PackageError",
    "ProxyExecutor",
    "SpecBuilder",
    "SpecMismatchError",
    "UnsupportedError",
    "VersionError",
    "dump",
    "dumps",
    "get_include",
    "load",
    "loads",
]


def __getattr__(name: str) -> object:
    """`es.cpp` (the C++ executor) is imported on first access: it builds a torch extension."""
    if name == "cpp":
        import importlib

        return importlib.import_module(".cpp", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
