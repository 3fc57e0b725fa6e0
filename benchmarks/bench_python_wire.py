"""Python decode/encode of ExportedPrograms: externspec vs torch._export.serde vs msgspec.

Each measurement runs in a fresh subprocess (so peak RSS is its own), with the garbage collector
paused for every contender alike. torch's decode is `json.loads` + `_dict_to_dataclass` (its
schema deserializer, what externspec replaces), its encode `_to_json_bytes`; msgspec is a typed
decode into Structs built from the same IDL. Best of REPEATS runs.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.timing import best_of, peak_rss_growth

ROOT = Path(__file__).resolve().parents[1]
SIZES = (1_000, 10_000, 100_000)
TORCH_MAX_NODES = 10_000  # torch's decode of 100k nodes takes minutes: measured up to 10k
REPEATS = 5


def _write_document(nodes: int, directory: Path) -> Path:
    """Generate the document once, in the parent: the measuring process only reads its bytes, so
    its peak RSS and heap are the decoder's, not the generator's."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.gen_program import make_exported_program

    path = directory / f"program_{nodes}.json"
    path.write_bytes(json.dumps(make_exported_program(nodes, seed=nodes)).encode())
    return path


def measure(impl: str, path: Path) -> dict[str, float]:
    """One contender on one document, in this process (called in a fresh subprocess)."""
    data = path.read_bytes()
    nodes = int(path.stem.rsplit("_", 1)[1])
    if impl == "externspec":
        import externspec as es

        def decode_once() -> Any:
            return es.loads(data, es.ExportedProgram)

        encode_one = es.dumps
    elif impl == "torch":
        from torch._export.serde import schema, serialize

        def decode_once() -> Any:
            return serialize._dict_to_dataclass(schema.ExportedProgram, json.loads(data))

        encode_one = serialize._to_json_bytes
    elif impl == "msgspec":
        import msgspec

        sys.path.insert(0, str(ROOT))
        from benchmarks.msgspec_models import build

        decoder = msgspec.json.Decoder(build().ExportedProgram)

        def decode_once() -> Any:
            return decoder.decode(data)

        encode_one = msgspec.json.encode
    else:
        raise ValueError(impl)
    # Imports are done and the bytes are read: the growth measured here is the decoded document's
    # (its first decode, the GC paused as for the timings).
    gc.disable()
    obj, decode_peak = peak_rss_growth(decode_once)
    gc.enable()
    repeats = 1 if impl == "torch" and nodes >= 10_000 else REPEATS  # torch: tens of seconds a run
    decode = best_of(decode_once, repeats)
    encode = best_of(lambda: encode_one(obj), repeats)
    return {"decode": decode, "encode": encode, "peak_mb": decode_peak / 1e6, "mb": len(data) / 1e6}


def _run_isolated(impl: str, path: Path) -> dict[str, float]:
    command = [sys.executable, "-m", "benchmarks.bench_python_wire", impl, str(path)]
    out = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run() -> list[str]:
    lines = [
        "Python wire: ExportedProgram decode+validate and encode (best of 5; torch at 10k: 1 run; GC paused for all)",
        f"{'nodes':>7} {'MB':>6} | {'es dec s':>8} {'es enc s':>8} {'us/node':>7} {'peak MB':>7} {'x doc':>5} | "
        f"{'torch dec':>9} {'dec x':>6} {'torch enc':>9} {'enc x':>6} | {'msgspec dec':>11} {'vs msgspec':>10}",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for nodes in SIZES:
            lines.append(_row(nodes, _write_document(nodes, Path(tmp))))
    lines.append("targets: decode >= 25x torch, >= 0.5x msgspec (msgspec time / externspec time); encode >= 5x torch; "
                 "us/node flat across sizes (linear cost); peak MB = growth of peak RSS during one decode "
                 "(x doc: over the document's size; target <= 5x at 100k nodes)")
    return lines


def _row(nodes: int, path: Path) -> str:
    es = _run_isolated("externspec", path)
    ms = _run_isolated("msgspec", path)
    row = (f"{nodes:>7} {es['mb']:>6.1f} | {es['decode']:>8.3f} {es['encode']:>8.3f} "
           f"{1e6 * es['decode'] / nodes:>7.1f} {es['peak_mb']:>7.0f} {es['peak_mb'] / es['mb']:>4.1f}x | ")
    if nodes <= TORCH_MAX_NODES:
        th = _run_isolated("torch", path)
        row += (f"{th['decode']:>9.3f} {th['decode'] / es['decode']:>5.1f}x "
                f"{th['encode']:>9.3f} {th['encode'] / es['encode']:>5.1f}x | ")
    else:
        row += f"{'-':>9} {'-':>6} {'-':>9} {'-':>6} | "
    return row + f"{ms['decode']:>11.3f} {ms['decode'] / es['decode']:>9.2f}x"


if __name__ == "__main__":
    if len(sys.argv) == 3:
        print(json.dumps(measure(sys.argv[1], Path(sys.argv[2]))))
    else:
        print("\n".join(run()))
