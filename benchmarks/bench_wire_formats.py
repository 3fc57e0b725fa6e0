"""Wire formats: size, decode and encode time of one ~10 MB ExportedProgram in JSON vs Thrift.

The same document (benchmarks/gen_program.py, 10k nodes) in externspec's three formats: JSON
(`es.loads`/`es.dumps`, pydantic-core), Thrift binary and Thrift compact (`externspec.thrift`,
pure Python readers feeding one pydantic-core validation). Every decode includes full validation
into the models. As an anchor, thriftpy2's Cython binary protocol decodes the same binary bytes
into its own unvalidated objects (loading the same IDL). Best of REPEATS, GC paused for all.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchmarks.timing import best_of

ROOT = Path(__file__).resolve().parents[1]
NODES = 10_000
REPEATS = 3


def measure(nodes: int = NODES) -> dict[str, dict[str, float]]:
    """{format: {bytes, decode, encode}} for one generated program."""
    sys.path.insert(0, str(ROOT))
    import externspec as es
    from benchmarks.gen_program import make_exported_program
    from externspec import thrift

    text = json.dumps(make_exported_program(nodes, seed=nodes)).encode()
    model = es.loads(text, es.ExportedProgram)
    results: dict[str, dict[str, float]] = {}
    json_out = es.dumps(model).encode()
    results["json"] = {"bytes": len(json_out), "decode": best_of(lambda: es.loads(json_out, es.ExportedProgram),
                                                                   REPEATS),
                       "encode": best_of(lambda: es.dumps(model), REPEATS)}
    for protocol in thrift.PROTOCOLS:
        data = thrift.dumps(model, protocol)
        assert thrift.loads(data, es.ExportedProgram, protocol) == model  # measure a correct codec
        results[protocol] = {
            "bytes": len(data),
            "decode": best_of(lambda data=data, p=protocol: thrift.loads(data, es.ExportedProgram, p),
                              REPEATS),
            "encode": best_of(lambda p=protocol: thrift.dumps(model, p), REPEATS),
        }
    import thriftpy2
    from thriftpy2.protocol import TCyBinaryProtocolFactory
    from thriftpy2.utils import deserialize, serialize

    idl = thriftpy2.load(str(ROOT / "schema/externspec.thrift"), module_name="bench_wire_thrift")
    binary = thrift.dumps(model, "binary")
    factory = TCyBinaryProtocolFactory()
    theirs = deserialize(idl.ExportedProgram(), binary, factory)
    assert serialize(theirs, factory) == binary
    results["thriftpy2"] = {"bytes": len(binary),
                            "decode": best_of(lambda: deserialize(idl.ExportedProgram(), binary, factory), REPEATS),
                            "encode": best_of(lambda: serialize(theirs, factory), REPEATS)}
    return results


def run() -> list[str]:
    r = measure()
    base = r["json"]
    rows = [("JSON (es.loads / es.dumps)", "json"), ("Thrift binary (externspec.thrift)", "binary"),
            ("Thrift compact (externspec.thrift)", "compact"), ("thriftpy2 Cython binary, no validation", "thriftpy2")]
    lines = [
        f"Wire formats: one {base['bytes'] / 1e6:.1f} MB ({NODES} node) ExportedProgram; decode = bytes -> validated "
        f"models; best of {REPEATS}, GC paused",
        f"{'format':<40} {'bytes':>10} {'size x':>7} | {'decode s':>8} {'MB/s':>6} {'dec x':>6} | "
        f"{'encode s':>8} {'enc x':>6}",
    ]
    for label, key in rows:
        m = r[key]
        lines.append(
            f"{label:<40} {m['bytes']:>10,} {m['bytes'] / base['bytes']:>6.2f}x | {m['decode']:>8.3f} "
            f"{m['bytes'] / 1e6 / m['decode']:>6.1f} {m['decode'] / base['decode']:>5.2f}x | "
            f"{m['encode']:>8.3f} {m['encode'] / base['encode']:>5.2f}x")
    lines.append("x columns: this format / JSON (size smaller is better; time < 1x is faster than JSON)")
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
