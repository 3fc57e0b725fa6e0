"""`make bench`: every benchmark module's table, measured side by side in one run.

Each `benchmarks/bench_*.py` exposes `run() -> list[str]`. Pass module names to run a subset:
`python benchmarks/run.py bench_python_wire`. The tables are for the torch of the Python that runs
this file: `make bench VENV=.venv-torch2.14` measures under torch 2.14.1 (`make setup-torch2.14`).
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    names = argv or sorted(p.stem for p in (ROOT / "benchmarks").glob("bench_*.py"))
    for name in names:
        start = time.perf_counter()
        lines = importlib.import_module(f"benchmarks.{name}").run()
        print("\n".join(lines))
        print(f"({name}: {time.perf_counter() - start:.0f} s)\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
