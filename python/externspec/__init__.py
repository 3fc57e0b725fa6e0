"""externspec: the versioned contract between AOT-compiled PyTorch code and its extern kernels.

The models are generated from schema/externspec.thrift; `loads`/`dumps` speak torch 2.13's JSON.
"""

from ._generated.models import *  # noqa: F403
from ._generated.models import IDL_CHECKSUM, SCHEMA_VERSION
from ._generated.models import __all__ as _model_names
from .cpp_include import get_include
from .errors import DecodeError, ExternSpecError, UnsupportedError, VersionError
from .wire import MAX_JSON_DEPTH, dump, dumps, load, loads

__version__ = "0.1.0"

__all__ = [
    *_model_names,
    "IDL_CHECKSUM",
    "MAX_JSON_DEPTH",
    "SCHEMA_VERSION",
    "DecodeError",
    "ExternSpecError",
    "UnsupportedError",
    "VersionError",
    "dump",
    "dumps",
    "get_include",
    "load",
    "loads",
]
