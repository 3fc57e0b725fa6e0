"""Hypothesis strategies for any generated model, built from the models' own THRIFT_FIELDS tables.

Recursive types (Argument -> GraphArgument -> Graph -> Node -> Argument) are bounded by `depth`:
below it, lists are empty, maps are empty and unions pick members without nested structs.
"""

from __future__ import annotations

import enum
import sys
from typing import Any

from hypothesis import strategies as st
from pydantic import BaseModel

from externspec._modelbase import Union as UnionModel

_INTS = {"byte": 8, "i16": 16, "i32": 32, "i64": 64}
_TEXT = st.text(max_size=12)


def _named(owner: type, name: str) -> type:
    return getattr(sys.modules[owner.__module__], name)


def _flat(owner: type, spec: Any) -> bool:
    """True when a wire type needs no nested struct (safe at the depth limit)."""
    if isinstance(spec, tuple):
        return spec[0] != "map" and _flat(owner, spec[1])
    if spec in ("bool", "string", "double", *_INTS):
        return True
    return issubclass(_named(owner, spec), enum.IntEnum)


def value(owner: type, spec: Any, depth: int) -> st.SearchStrategy[Any]:
    if isinstance(spec, tuple):
        size = 0 if depth <= 0 else 3
        if spec[0] == "map":
            return st.dictionaries(value(owner, spec[1], depth - 1), value(owner, spec[2], depth - 1), max_size=size)
        return st.lists(value(owner, spec[1], depth - 1), max_size=size)
    if spec == "bool":
        return st.booleans()
    if spec == "string":
        return _TEXT
    if spec == "double":
        return st.floats(allow_nan=True, allow_infinity=True)
    if spec in _INTS:
        bits = _INTS[spec]
        return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    cls = _named(owner, spec)
    if issubclass(cls, enum.IntEnum):
        return st.sampled_from(list(cls))
    return model(cls, depth - 1)


def model(cls: type[BaseModel], depth: int = 4) -> st.SearchStrategy[BaseModel]:
    fields = cls.THRIFT_FIELDS  # type: ignore[attr-defined]
    if issubclass(cls, UnionModel):
        members = [(n, s) for _, n, s in fields if depth > 0 or _flat(cls, s)] or [
            (n, s) for _, n, s in fields][:1]
        return st.one_of([value(cls, s, depth).map(lambda v, n=n: cls.model_validate({n: v})) for n, s in members])
    parts = {}
    for _, name, spec in fields:
        v = value(cls, spec, depth)
        info = cls.model_fields[name]
        parts[name] = st.none() | v if (not info.is_required() and info.default is None) else v
    return st.fixed_dictionaries(parts).map(cls.model_validate)
