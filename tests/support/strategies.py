"""Hypothesis strategies for externspec documents, derived from the generated models.

Reusable by any test: `documents(es.Node)` draws valid `es.Node` instances, covering every field,
union member and enum value, so the strategies follow the IDL as it changes (no hand-written
shapes). `mutations(text)` turns a valid document's JSON into hostile variants: type swaps,
missing and extra keys, multi-key unions, out-of-range ints, NaN, deep nesting, long strings and
lists, invalid UTF-8.

Built from the field annotations of the pydantic models (the IR's view as emitted), the same way
as the C++ round-trip property of tests/decoder_cpp/test_roundtrip_property.py, which can import
`documents` from here.
"""

from __future__ import annotations

import enum
import json
import types
import typing
from typing import Any

from hypothesis import strategies as st
from pydantic import BaseModel

import externspec as es
from externspec._modelbase import I64_MAX, I64_MIN
from externspec._modelbase import Union as UnionModel

# Every generated struct and union: the "every model" of the round-trip property.
MODELS: tuple[type[BaseModel], ...] = tuple(
    obj for name in es._model_names
    if isinstance(obj := getattr(es, name), type) and issubclass(obj, BaseModel)
)
# Every key the schema knows: extra keys drawn from here hit real members and fields.
SCHEMA_KEYS: tuple[str, ...] = tuple(sorted({k for m in MODELS for k in m.model_fields}))

text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
finite_floats = st.floats(allow_nan=False) | st.sampled_from([0.1, 1e-05, 1e20, 1e16, 1e15, -0.0, 1.5e-7, 5e-324])
# NaN and the infinities too, for the properties that compare encodings rather than models (NaN != NaN).
any_floats = st.floats() | finite_floats


def _bounds(field: Any) -> tuple[int, int]:
    lo, hi = I64_MIN, I64_MAX
    for m in getattr(field, "metadata", ()):
        lo = getattr(m, "ge", lo)
        hi = getattr(m, "le", hi)
    return lo, hi


def _value(tp: Any, depth: int, floats: st.SearchStrategy[float], field: Any = None) -> st.SearchStrategy[Any]:
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        base, *meta = typing.get_args(tp)
        info = next((m for m in meta if hasattr(m, "metadata")), field)
        return _value(base, depth, floats, info)
    if origin in (typing.Union, types.UnionType):
        (inner,) = [a for a in typing.get_args(tp) if a is not type(None)]
        return st.none() | _value(inner, depth, floats, field)
    if origin is list:
        (elem,) = typing.get_args(tp)
        return st.lists(_value(elem, depth - 1, floats), max_size=3 if depth > 0 else 0)
    if origin is dict:
        _, elem = typing.get_args(tp)
        return st.dictionaries(text, _value(elem, depth - 1, floats), max_size=3 if depth > 0 else 0)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return st.sampled_from(list(tp))
    if tp is bool:
        return st.booleans()
    if tp is int:
        lo, hi = _bounds(field)
        return st.integers(lo, hi) | st.sampled_from([lo, hi, 0])
    if tp is float:
        return floats
    if tp is str:
        return text
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return st.deferred(lambda: _model(tp, depth - 1, floats))
    raise TypeError(f"no strategy for {tp!r}")


def _is_recursive(tp: Any) -> bool:
    """Members that can only be built by going deeper (Graph inside Argument): dropped at depth 0."""
    return "Graph" in repr(tp) or "Argument]" in repr(tp)


def _model(model: type[BaseModel], depth: int, floats: st.SearchStrategy[float]) -> st.SearchStrategy[Any]:
    # Validators are built on first use: until then a field's annotation may still be a forward
    # reference (Argument's `Optional[GraphArgument]`), whichever test happened to run first.
    model.model_rebuild()
    fields = model.model_fields
    if issubclass(model, UnionModel):
        members = [n for n, f in fields.items() if depth > 0 or not _is_recursive(f.annotation)]
        inner = {n: typing.get_args(fields[n].annotation)[0] for n in members}  # strip Optional
        return st.one_of([_value(inner[n], depth, floats, fields[n]).map(lambda v, n=n: model.model_validate({n: v}))
                          for n in members])
    required = {n: _value(f.annotation, depth, floats, f) for n, f in fields.items() if f.is_required()}
    optional = {n: _value(f.annotation, depth, floats, f) for n, f in fields.items() if not f.is_required()}
    return st.fixed_dictionaries(required, optional=optional).map(model.model_validate)


def readable_version(doc: BaseModel, minor: int) -> BaseModel:
    """Give a versioned document a version this reader accepts (same major, any minor); the version
    policy itself is tested elsewhere. Other types are returned as they are."""
    if isinstance(doc, es.ExternKernelNodes) and doc.schema_version is not None:
        return doc.model_copy(update={"schema_version": es.SchemaVersion(major=es.SCHEMA_VERSION.major, minor=minor)})
    if isinstance(doc, es.ExportedProgram):
        return doc.model_copy(update={"schema_version": es.SchemaVersion(major=es.TORCH_EXPORT_SCHEMA_MAJOR,
                                                                         minor=minor)})
    return doc


def documents(model: type[BaseModel], depth: int = 3,
              floats: st.SearchStrategy[float] = finite_floats) -> st.SearchStrategy[Any]:
    """Valid instances of `model` that any reader of this schema version accepts.

    `depth` bounds nesting of lists, maps and recursive members (Graph inside Argument); `floats`
    draws every double (`any_floats` adds NaN and the infinities)."""
    return st.builds(readable_version, _model(model, depth, floats), st.integers(0, 2**31))


# ----------------------------------------------------------------------------------------------
# Mutations of a valid document's JSON

_FOREIGN = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.just(1.5), st.just("x"), st.just([]),
                     st.just({}), st.just({"as_int": 1}))
HOSTILE_INTS = (2**63, -(2**63) - 1, 2**64, -1, -(2**31) - 1, 2**31, 10**30, -(10**30))
INVALID_UTF8 = (b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80")
NON_FINITE_TOKENS = ("NaN", "Infinity", "-Infinity", '"NaN"', '"Infinity"', '"-Infinity"', '"nan"', "1e400")


def _slots(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every position in a JSON tree (path of keys and indices); the root is ()."""
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _slots(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _slots(v, (*path, i))
    return out


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        node = node[p]
    return node


def _replace(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _get(root, path[:-1])[path[-1]] = value
    return root


def _nest(value: Any, levels: int) -> Any:
    for _ in range(levels):
        value = [value]
    return value


@st.composite
def mutated_trees(draw: st.DrawFn, tree: Any) -> Any:
    """One structural mutation of a parsed JSON tree (`tree` is not modified)."""
    tree = json.loads(json.dumps(tree))
    slots = _slots(tree)
    path = draw(st.sampled_from(slots))
    target = _get(tree, path)
    kind = draw(st.sampled_from(["swap", "drop_key", "extra_key", "second_member", "int", "nest", "long_string",
                                 "long_list", "empty"]))
    if kind == "swap":
        return _replace(tree, path, draw(_FOREIGN))
    if kind == "drop_key" and isinstance(target, dict) and target:
        del target[draw(st.sampled_from(sorted(target)))]
        return tree
    if kind in ("extra_key", "second_member") and isinstance(target, dict):
        key = draw(st.sampled_from(SCHEMA_KEYS) | text)
        target[key] = draw(_FOREIGN) if kind == "extra_key" else (next(iter(target.values())) if target else 0)
        return tree
    if kind == "int":
        return _replace(tree, path, draw(st.sampled_from(HOSTILE_INTS)))
    if kind == "nest":
        return _replace(tree, path, _nest(target, draw(st.integers(1, 260))))
    if kind == "long_string":
        return _replace(tree, path, "\u00e9" * draw(st.sampled_from([10_000, 300_000])))
    if kind == "long_list" and isinstance(target, list) and target:
        return _replace(tree, path, target * draw(st.sampled_from([1000, 20_000])))
    return _replace(tree, path, [] if isinstance(target, list) else {})


@st.composite
def mutated_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    """Byte-level damage: invalid UTF-8 spliced in, a non-finite token over a number, truncation."""
    kind = draw(st.sampled_from(["utf8", "non_finite", "truncate"]))
    if kind == "utf8":
        at = draw(st.integers(0, len(data)))
        return data[:at] + draw(st.sampled_from(INVALID_UTF8)) + data[at:]
    if kind == "non_finite":
        numbers = [i for i in range(len(data)) if data[i:i + 1].isdigit() and not data[i - 1:i].isdigit()]
        if numbers:
            at = draw(st.sampled_from(numbers))
            end = at
            while end < len(data) and data[end:end + 1] in b"0123456789.eE+-":
                end += 1
            return data[:at] + draw(st.sampled_from(NON_FINITE_TOKENS)).encode() + data[end:]
    return data[: draw(st.integers(0, max(0, len(data) - 1)))]
