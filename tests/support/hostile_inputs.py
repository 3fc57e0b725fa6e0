"""Worst-case inputs of the decoders, shared by the hostile tests and benchmarks/bench_hostile.py."""

from __future__ import annotations

import json

import numpy as np

_FNV_OFFSET, _FNV_PRIME = 1469598103934665603, 1099511628211
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def flooding_keys(count: int) -> list[str]:
    """`count` distinct map keys that the old duplicate-key index of the C++ decoder (unseeded
    FNV-1a, `h ^ (h >> 29)`, linear probing in a table of the next power of two >= 2 * count)
    put into one run of slots at the bottom of its table: each insert then probed past all the
    earlier keys, O(n^2). Searched with vectorized FNV-1a over fixed-width hex names."""
    cap = 64
    while cap < 2 * count:
        cap <<= 1
    window = max(cap // 64, 1)  # keys land in slots [0, window): a cluster that linear probing walks
    found: list[str] = []
    start = 0
    batch = 1 << 20
    while len(found) < count:
        ids = np.arange(start, start + batch, dtype=np.uint64)
        digits = [_HEX[((ids >> np.uint64(4 * (7 - d))) & np.uint64(15)).astype(np.intp)] for d in range(8)]
        h = np.full(batch, _FNV_OFFSET, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for ch in [np.full(batch, ord("k"), dtype=np.uint8), *digits]:
                h = (h ^ ch.astype(np.uint64)) * np.uint64(_FNV_PRIME)
        slot = (h ^ (h >> np.uint64(29))) & np.uint64(cap - 1)
        for i in np.nonzero(slot < np.uint64(window))[0][: count - len(found)]:
            found.append("k" + "".join(chr(int(d[i])) for d in digits))
        start += batch
    return found


def benign_keys(count: int) -> list[str]:
    """As many keys of the same length as `flooding_keys`, in order (no collisions to speak of)."""
    return [f"k{i:08x}" for i in range(count)]


def node_with_metadata(keys: list[str]) -> bytes:
    """A `Node` document whose `metadata` map has the given keys."""
    node = {"target": "aten::add.Tensor", "inputs": [], "outputs": [], "metadata": dict.fromkeys(keys, "")}
    return json.dumps(node).encode()


# The nesting rule every decoder applies (Python at pydantic-core's limit and with a lower
# `max_depth`, both C++ backends at any EXTERNSPEC_MAX_JSON_DEPTH): no value, scalar or container,
# lies inside more than the limit's number of containers; the top-level value lies inside none.
NESTING_SHAPES = {"objects": "o", "arrays": "a", "mixed": "oa"}
NESTING_LEAVES = {"scalar": "0", "string": '"[{"', "empty-array": "[]", "empty-object": "{}"}


def nested_value(depth: int, shape: str, leaf: str) -> str:
    """JSON text for the value of a top-level object's member (itself inside 1 container) whose
    innermost value `leaf` lies inside `depth` containers: `depth - 1` containers of `shape`
    (a key of NESTING_SHAPES) around it."""
    value = NESTING_LEAVES[leaf]
    pattern = NESTING_SHAPES[shape]
    for i in range(depth - 1):
        value = '{"a": ' + value + "}" if pattern[i % len(pattern)] == "o" else "[" + value + "]"
    return value


def nesting_cases(limit: int) -> list[tuple[str, str, bool]]:
    """(id, value text, accepted) for innermost values at depths limit - 1, limit and limit + 1, of
    every shape and leaf: what a decoder with nesting limit `limit` must accept or refuse."""
    return [(f"{shape}-{leaf}-{depth - limit:+d}", nested_value(depth, shape, leaf), depth <= limit)
            for depth in (limit - 1, limit, limit + 1) if depth >= 1
            for shape in NESTING_SHAPES for leaf in NESTING_LEAVES]
