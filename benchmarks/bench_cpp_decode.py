"""C++ decode of one ~10 MB ExportedProgram: torch's generated header vs externspec's two backends.

All three decode the same file into typed structs, compiled with the same flags (-O2), in one run;
each is timed over several iterations inside its process (best and median). Target (docs/performance.md): the
fast backend >= 5x torch's header, the default backend no slower than it.

Run: `.venv/bin/python benchmarks/bench_cpp_decode.py` (or `make bench`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import torch

from externspec._cache import cache_dir
from externspec._cppbuild import build
from externspec.cpp_include import compile_flags, link_flags

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script too, not only through benchmarks/run.py

from benchmarks.gen_program import make_exported_program_json  # noqa: E402

CACHE = cache_dir() / "bench"
SOURCE = Path(__file__).with_name("cpp") / "bench_decode.cpp"
NUM_NODES = int(os.environ.get("BENCH_CPP_NODES", "10000"))
ITERATIONS = int(os.environ.get("BENCH_CPP_ITERATIONS", "7"))
TORCH_HEADER = Path(torch.__file__).parent / "include/torch/csrc/utils/generated_serialization_types.h"

DECODERS = {
    "torch generated_serialization_types.h (nlohmann)": ["-DDECODER_TORCH", "-std=c++17",
                                                         f"-I{Path(torch.__file__).parent / 'include'}"],
    "externspec default backend (nlohmann)": ["-DDECODER_NLOHMANN", *compile_flags("nlohmann")],
    "externspec fast backend (simdjson)": ["-DDECODER_SIMDJSON", *compile_flags("simdjson"), *link_flags("simdjson")],
}


def _measure(exe: Path, doc: Path) -> tuple[int, float, float]:
    out = subprocess.run([str(exe), str(doc), str(ITERATIONS)], capture_output=True, text=True, check=True).stdout
    fields = dict(kv.split("=") for kv in out.split())
    return int(fields["nodes"]), float(fields["best_ms"]), float(fields["median_ms"])


def run() -> list[str]:
    """Build the three decoders (cached), decode the same document with each, return the table."""
    doc = CACHE / f"exported_program_{NUM_NODES}.json"
    if not doc.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        doc.write_text(make_exported_program_json(NUM_NODES, seed=0), encoding="utf-8")
    size_mb = doc.stat().st_size / 1e6
    results = {}
    for name, flags in DECODERS.items():
        exe = build(SOURCE, CACHE, "bench_decode-" + flags[0][len("-DDECODER_"):].lower(), [*flags, "-O2"],
                    extra_deps=[TORCH_HEADER, SOURCE.with_name("backend.h")])
        results[name] = _measure(exe, doc)
    node_counts = {n for n, _, _ in results.values()}
    assert node_counts == {NUM_NODES} or len(node_counts) == 1, f"decoders disagree on the document: {results}"
    torch_best = results[next(iter(DECODERS))][1]
    lines = [f"C++ decode of one ExportedProgram: {size_mb:.1f} MB, {NUM_NODES} top-level nodes, "
             f"best of {ITERATIONS} (g++ -O2)",
             f"{'decoder':<52} {'best ms':>9} {'median ms':>10} {'MB/s':>7} {'vs torch':>9}"]
    for name, (_, best, median) in results.items():
        lines.append(f"{name:<52} {best:9.1f} {median:10.1f} {size_mb / best * 1e3:7.0f} {torch_best / best:8.1f}x")
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
