"""The C++ decoder enforces Python's size and nesting limits: same defaults, same verdicts.

The defaults are one table both read (wire/limits.def), checked by a compiled program; the verdicts
are compared with the conformance harness rebuilt with lowered limits (EXTERNSPEC_MAX_JSON_BYTES /
EXTERNSPEC_MAX_JSON_DEPTH), so documents just inside and just outside each limit stay small.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import externspec as es
from externspec import wire
from externspec.cpp_include import get_include
from tests.decoder_cpp.harness import BACKENDS, CACHE, HARNESS_SOURCE, Harness, harness_flags
from tests.support.cppbuild import build
from tests.support.hostile_inputs import nesting_cases

LOW_BYTES, LOW_DEPTH = 300, 5


_PRINT_DEFAULTS = """#include <cstdio>
#include <externspec/wire.h>
int main() {
  std::printf("%zu %d %zu\\n", externspec::MAX_JSON_BYTES, externspec::MAX_JSON_DEPTH, externspec::MAX_DECODE_ERRORS);
}
"""


def test_cpp_defaults_are_pythons(tmp_path: Path) -> None:
    """Both read wire/limits.def; compiled without the EXTERNSPEC_MAX_JSON_* macros, the C++ constants
    are Python's (a lowered build, below, shows the macros still override them)."""
    source = tmp_path / "print_defaults.cpp"
    source.write_text(_PRINT_DEFAULTS, encoding="utf-8")
    exe = build(source, CACHE, "print_decoder_defaults", ["-std=c++17", f"-I{get_include()}", "-Wall", "-Werror"])
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    assert [int(x) for x in out] == [wire.MAX_JSON_BYTES, wire.MAX_JSON_DEPTH, wire.MAX_DECODE_ERRORS]
    assert (wire.MAX_JSON_BYTES, wire.MAX_JSON_DEPTH) == (256 * 1024 * 1024, 200)  # SECURITY.md's table


@pytest.fixture(scope="module", params=BACKENDS)
def low_limit_harness(request: pytest.FixtureRequest) -> Harness:
    flags = [*harness_flags(request.param), f"-DEXTERNSPEC_MAX_JSON_BYTES={LOW_BYTES}",
             f"-DEXTERNSPEC_MAX_JSON_DEPTH={LOW_DEPTH}"]
    return Harness(build(HARNESS_SOURCE, CACHE, f"conformance_harness-low-limits-{request.param}", flags),
                   request.param)


def _device(levels: int, pad: int = 0) -> str:
    value = "[" * levels + "]" * levels if levels else "0"
    return '{"type": "cpu", "index": 0, "x": ' + value + ', "pad": "' + "p" * pad + '"}'


@pytest.mark.slow
def test_cpp_and_python_agree_at_the_limits(low_limit_harness: Harness, tmp_path: Path) -> None:
    base = len(_device(0))
    docs = {
        "depth_at_limit": _device(LOW_DEPTH),
        "depth_over_limit": _device(LOW_DEPTH + 1),
        "depth_far_over": _device(10_000),
        "size_at_limit": _device(0, LOW_BYTES - base),
        "size_over_limit": _device(0, LOW_BYTES - base + 1),
    }
    for name, text in docs.items():
        path = tmp_path / f"{name}.json"
        path.write_text(text, encoding="utf-8")
        got = low_limit_harness.one("Device", path)
        try:
            es.loads(text, es.Device, max_bytes=LOW_BYTES, max_depth=LOW_DEPTH)
            want = ("OK", "")
        except es.DecodeError as exc:
            want = ("DecodeError", str(exc))
        assert got.kind == want[0], f"{low_limit_harness.build} {name}: {got}"
        if got.kind == "DecodeError":
            assert got.path == "$"
            assert got.message.startswith(want[1]), f"{low_limit_harness.build} {name}: {got.message} vs {want[1]}"


def _nesting_verdicts(harness: Harness, limit: int, tmp_path: Path) -> None:
    """The table of tests/support/hostile_inputs.py (objects, arrays, mixed; scalar, string or empty
    leaf; at limit - 1, limit, limit + 1) through `harness`, against the rule's verdict and Python's."""
    cases = nesting_cases(limit)
    paths = []
    for name, value, _ in cases:
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text('{"type": "cpu", "index": 0, "x": ' + value + "}", encoding="utf-8")
    for (name, _, accepted), path, got in zip(cases, paths, harness.run([("Device", p) for p in paths]), strict=True):
        python_accepts = True
        try:
            es.loads(path.read_bytes(), es.Device, max_depth=limit)
        except es.DecodeError:
            python_accepts = False
        assert (got.kind == "OK", python_accepts) == (accepted, accepted), f"{harness.build} {name}: {got}"
        if not accepted:
            assert got.path == "$" and got.message.startswith(f"$: nesting deeper than {limit} levels"), \
                f"{harness.build} {name}: {got}"


@pytest.mark.slow
def test_one_nesting_rule_at_the_default_limit(harness: Harness, tmp_path: Path) -> None:
    """200 nested objects were accepted by nlohmann and refused by Python (issue 26, item 12)."""
    _nesting_verdicts(harness, wire.MAX_JSON_DEPTH, tmp_path)


@pytest.mark.slow
def test_one_nesting_rule_at_a_lower_limit(low_limit_harness: Harness, tmp_path: Path) -> None:
    _nesting_verdicts(low_limit_harness, LOW_DEPTH, tmp_path)


@pytest.mark.slow
def test_chosen_map_keys_cannot_flood_the_duplicate_key_check(harness: Harness, tmp_path: Path) -> None:
    """100k metadata keys chosen to collide in the former FNV-1a index (7 s there, quadratic) decode
    like 100k ordinary keys, with repeated keys merged as Python's dict merges them. The harness's
    timeout is the hang guard."""
    from tests.support.hostile_inputs import benign_keys, flooding_keys, node_with_metadata

    flood = flooding_keys(100_000)
    docs = {"flood": node_with_metadata(flood), "benign": node_with_metadata(benign_keys(100_000)),
            # every key twice, the second value winning at the first position
            "repeated": json.dumps({"target": "t", "inputs": [], "outputs": [],
                                    "metadata": dict.fromkeys(flood[:1000], "")}).encode()[:-2]
                        + b", " + b", ".join(f'"{k}": "v"'.encode() for k in flood[:1000]) + b"}}"}
    paths = []
    for name, data in docs.items():
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_bytes(data)
    for path, got in zip(paths, harness.run([("Node", p) for p in paths]), strict=True):
        assert got.kind == "OK", f"{harness.build} {path.name}: {got.message}"
        assert got.encoded == es.dumps(es.loads(path.read_bytes(), es.Node)), f"{harness.build} {path.name}"
    assert set(json.loads(docs["repeated"])["metadata"].values()) == {"v"}


SATURATED = 0xFFFFFF  # simdjson's dom::object::size() and dom::array::size() stop counting here
SATURATION_TIMEOUT = 240  # s; the hang guard (with a saturated count, a large map once looped forever)


def _node_with_map(n: int) -> bytes:
    """A Node whose metadata holds `n` distinct keys (hex counters: 12 bytes a member, under the
    default size limit for 2^24+2 keys), written exactly as the encoder writes it."""
    members = b",".join(b'"%x":""' % i for i in range(n))
    return b'{"target":"t","inputs":[],"outputs":[],"metadata":{' + members + \
        b'},"is_hop_single_tensor_return":null,"name":null}'


def _argument_with_list(n: int) -> bytes:
    return b'{"as_ints":[' + b",".join([b"0"] * n) + b"]}"


@pytest.mark.slow
@pytest.mark.parametrize(("type_name", "make"), [("Node", _node_with_map), ("Argument", _argument_with_list)],
                         ids=["map", "list"])
def test_simdjson_counts_containers_past_its_saturated_size(type_name: str, make, tmp_path: Path) -> None:
    """A map with 2^24+2 keys (and a list with 2^24+2 elements) through the simdjson backend decodes
    with every member, in order: re-encoded it is the input byte for byte. simdjson's size() reports
    0xFFFFFF for any larger container; the backend counts those by iteration."""
    n = SATURATED + 3
    data = make(n)
    assert len(data) <= wire.MAX_JSON_BYTES, len(data)
    path = tmp_path / "big.json"
    path.write_bytes(data)
    exe = build(HARNESS_SOURCE, CACHE, "conformance_harness-simdjson", harness_flags("simdjson"))
    try:
        proc = subprocess.run([str(exe)], input=f"{type_name}\t0\t{path}\n".encode(), capture_output=True,
                              timeout=SATURATION_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the simdjson backend did not finish a {type_name} of {n} members in {SATURATION_TIMEOUT} s")
    assert proc.returncode == 0, proc.stderr[-2000:]
    kind, _, encoded = proc.stdout.rstrip(b"\n").partition(b"\t")
    assert kind == b"OK", proc.stdout[:2000]
    assert len(encoded) == len(data) and encoded == data
