"""What repeated loading of one package costs a long-lived process: es.cpp.AOTIRunner load/close
cycles of the runner test package, in a fresh child; mappings of extracted model libraries
(/proc/self/maps lines under externspec-aoti-*), all mappings and RSS after the first cycle and
after the last. A model library cannot be unmapped (NODELETE); the runner loads the same bytes
once (docs/aoti-packages.md).

    python benchmarks/run.py bench_runner_cycles

`EXTERNSPEC_BENCH_PYTHONPATH` points the child at another checkout's python/ (the "before").
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CYCLES = 1000

_CHILD = """
import os, sys
if os.environ.get('EXTERNSPEC_BENCH_PYTHONPATH'):
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != 'ScikitBuildRedirectingFinder']
import externspec as es

def state():
    with open('/proc/self/maps') as f:
        lines = f.readlines()
    rss = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmRSS:'))
    return sum('/externspec-aoti-' in l for l in lines), len(lines), rss * 1024

path, cycles = sys.argv[1], int(sys.argv[2])
for i in range(cycles):
    es.cpp.AOTIRunner(path).close()
    if i == 0:
        first = state()
print(*first, *state(), sep='\\t')
"""


def run() -> list[str]:
    sys.path.insert(0, str(ROOT))
    from tests.support import cpp_models

    package = cpp_models.package("runner_blob")
    env = dict(os.environ)
    if os.environ.get("EXTERNSPEC_BENCH_PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["EXTERNSPEC_BENCH_PYTHONPATH"]
    out = subprocess.run([sys.executable, "-c", _CHILD, str(package), str(CYCLES)], capture_output=True, text=True,
                         env=env, check=True).stdout.split()
    lib1, maps1, rss1, lib2, maps2, rss2 = map(int, out)
    return [f"es.cpp.AOTIRunner load/close cycles of one package ({package.name}), fresh process",
            f"{'after':>12} | {'library mappings':>16} {'all mappings':>12} {'RSS MB':>8}",
            f"{'1 cycle':>12} | {lib1:>16} {maps1:>12} {rss1 / 1e6:>8.1f}",
            f"{f'{CYCLES} cycles':>12} | {lib2:>16} {maps2:>12} {rss2 / 1e6:>8.1f}",
            f"growth per cycle: {(maps2 - maps1) / (CYCLES - 1):.2f} mappings, "
            f"{(rss2 - rss1) / (CYCLES - 1) / 1e3:.1f} kB RSS"]


if __name__ == "__main__":
    print("\n".join(run()))
