"""C++ decode of one ~10 MB ExportedProgram: torch's generated header vs externspec's two backends,
and what the decoder costs to compile.

All three decode the same file into typed structs, compiled with the same flags (-O2), in one run;
each is timed over several iterations inside its process (best and median). Targets
(docs/performance.md): the default backend >= 5x torch's header, the fast backend >= 10x, and the
fast backend's typed decode <= 4x simdjson's bare DOM parse of the same bytes. nlohmann's SAX parse
into a handler that drops every event is printed as the default backend's floor.

Compile cost: `g++ -O2 -c` of a translation unit that decodes ExternKernelNodes with the default
backend, against one that includes nlohmann/json.hpp alone (benchmarks/cpp/compile_cost.cpp),
best of a few runs; header-only, and with the codec compiled separately (EXTERNSPEC_SEPARATE_CODEC:
the unit instantiates nothing and skips json.hpp; the one codec unit of the program, timed too,
instantiates every type). Target: the decoding unit <= 2.5 s.

Run: `.venv/bin/python benchmarks/bench_cpp_decode.py` (or `make bench`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from externspec._cache import cache_dir
from externspec.cpp_include import compile_flags, link_flags

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script too, not only through benchmarks/run.py

from benchmarks.gen_program import make_exported_program_json  # noqa: E402
from tests.support.cppbuild import COMPILER, build  # noqa: E402

CACHE = cache_dir() / "bench"
SOURCE = Path(__file__).with_name("cpp") / "bench_decode.cpp"
COMPILE_SOURCE = Path(__file__).with_name("cpp") / "compile_cost.cpp"
COMPILE_RUNS = int(os.environ.get("BENCH_CPP_COMPILE_RUNS", "3"))
NUM_NODES = int(os.environ.get("BENCH_CPP_NODES", "10000"))
ITERATIONS = int(os.environ.get("BENCH_CPP_ITERATIONS", "7"))
TORCH_HEADER = Path(torch.__file__).parent / "include/torch/csrc/utils/generated_serialization_types.h"

DECODERS = {
    "torch generated_serialization_types.h (nlohmann)": ["-DDECODER_TORCH", "-std=c++17",
                                                         f"-I{Path(torch.__file__).parent / 'include'}"],
    "externspec default backend (nlohmann)": ["-DDECODER_NLOHMANN", *compile_flags("nlohmann")],
    "externspec fast backend (simdjson)": ["-DDECODER_SIMDJSON", *compile_flags("simdjson"), *link_flags("simdjson")],
}
BARE_PARSE = ["-DPARSE_SIMDJSON", "-std=c++17", *link_flags("simdjson")]
NLOHMANN_SAX = ["-DPARSE_NLOHMANN", "-std=c++17"]
TARGETS = {"externspec default backend (nlohmann)": 5.0, "externspec fast backend (simdjson)": 10.0}
TYPED_OVER_BARE_TARGET = 4.0
COMPILE_TARGET_S = 2.5


def _measure(exe: Path, doc: Path) -> tuple[int, float, float]:
    out = subprocess.run([str(exe), str(doc), str(ITERATIONS)], capture_output=True, text=True, check=True).stdout
    fields = dict(kv.split("=") for kv in out.split())
    return int(fields["nodes"]), float(fields["best_ms"]), float(fields["median_ms"])


def _build(flags: list[str]) -> Path:
    return build(SOURCE, CACHE, "bench_decode-" + flags[0][len("-D"):].lower(), [*flags, "-O2"],
                 extra_deps=[TORCH_HEADER, SOURCE.with_name("backend.h")])


def _compile_seconds(flags: list[str]) -> float:
    """The fastest of COMPILE_RUNS `g++ -O2 -c` runs of benchmarks/cpp/compile_cost.cpp."""
    best = float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [COMPILER, *flags, "-O2", "-c", str(COMPILE_SOURCE), "-o", str(Path(tmp) / "tu.o")]
        for _ in range(COMPILE_RUNS):
            start = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            best = min(best, time.perf_counter() - start)
    return best


def _decode_lines() -> list[str]:
    doc = CACHE / f"exported_program_{NUM_NODES}.json"
    if not doc.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        doc.write_text(make_exported_program_json(NUM_NODES, seed=0), encoding="utf-8")
    size_mb = doc.stat().st_size / 1e6
    results = {name: _measure(_build(flags), doc) for name, flags in DECODERS.items()}
    node_counts = {n for n, _, _ in results.values()}
    assert node_counts == {NUM_NODES} or len(node_counts) == 1, f"decoders disagree on the document: {results}"
    _, bare_best, bare_median = _measure(_build(BARE_PARSE), doc)
    _, sax_best, sax_median = _measure(_build(NLOHMANN_SAX), doc)
    torch_best = results[next(iter(DECODERS))][1]
    lines = [f"C++ decode of one ExportedProgram: {size_mb:.1f} MB, {NUM_NODES} top-level nodes, "
             f"best of {ITERATIONS} (g++ -O2)",
             f"{'decoder':<52} {'best ms':>9} {'median ms':>10} {'MB/s':>7} {'vs torch':>9}  target"]
    for name, (_, best, median) in results.items():
        target = f"  >= {TARGETS[name]:.0f}x" if name in TARGETS else ""
        lines.append(f"{name:<52} {best:9.1f} {median:10.1f} {size_mb / best * 1e3:7.0f} {torch_best / best:8.1f}x"
                     f"{target}")
    fast_best = results["externspec fast backend (simdjson)"][1]
    lines.append(f"{'simdjson DOM parse alone (nothing read)':<52} {bare_best:9.1f} {bare_median:10.1f} "
                 f"{size_mb / bare_best * 1e3:7.0f}")
    lines.append(f"  fast backend typed decode / bare parse: {fast_best / bare_best:.1f}x "
                 f"(target <= {TYPED_OVER_BARE_TARGET:.0f}x)")
    default_best = results["externspec default backend (nlohmann)"][1]
    lines.append(f"{'nlohmann SAX parse alone (events dropped)':<52} {sax_best:9.1f} {sax_median:10.1f} "
                 f"{size_mb / sax_best * 1e3:7.0f} {torch_best / sax_best:8.1f}x")
    lines.append(f"  the default backend's floor: its parser alone is {sax_best / default_best:.0%} of its decode")
    return lines


def _compile_lines() -> list[str]:
    decoder = _compile_seconds(compile_flags("nlohmann"))
    floor = _compile_seconds(["-DINCLUDE_ONLY", "-std=c++17"])
    separate = _compile_seconds(["-DEXTERNSPEC_SEPARATE_CODEC", *compile_flags("nlohmann")])
    codec = _compile_seconds(["-DEXTERNSPEC_CODEC_DEFINITIONS", *compile_flags("nlohmann")])
    target = f"(target <= {COMPILE_TARGET_S} s)"
    return [f"C++ compile cost, g++ -O2 -c, best of {COMPILE_RUNS} (benchmarks/cpp/compile_cost.cpp)",
            f"  decode<ExternKernelNodes>, header-only (default backend):   {decoder:5.2f} s {target}",
            f"  nlohmann/json.hpp alone:                                    {floor:5.2f} s",
            f"  externspec's cost over the include:                         {decoder - floor:5.2f} s",
            f"  decode<ExternKernelNodes>, EXTERNSPEC_SEPARATE_CODEC:       {separate:5.2f} s {target}",
            f"  its codec unit, once per program (EXTERNSPEC_CODEC_DEFINITIONS): {codec:5.2f} s "
            "(every enum, struct and union)"]


def run() -> list[str]:
    """Build the decoders (cached), decode the same document with each, time the compile; the tables."""
    return [*_decode_lines(), "", *_compile_lines()]


if __name__ == "__main__":
    print("\n".join(run()))
