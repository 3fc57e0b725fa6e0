"""Command-line startup: `externspec` commands on a small JSON file, next to `python -c pass`.

Each row is a fresh process, measured round-robin with the others (best of ROUNDS, so machine
noise hits every row alike). Target (docs/performance.md): `--help`, `validate`, `inspect
--no-slots` and `convert` of a small JSON file within 0.3 s with torch installed, because none
of them imports torch; `import torch` is shown for scale.

The processes run with compiled bytecode, as an installed wheel has it (pip compiles at install):
their caches go to a temporary PYTHONPYCACHEPREFIX, written by one unmeasured warm-up round, and
PYTHONDONTWRITEBYTECODE is dropped for them. Without a cache every row compiles externspec's
sources (the generated models alone are 1,400 lines) and pays some 60 ms more.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROUNDS = 7
TARGET_S = 0.3
SPEC = {"nodes": [{"name": "buf0", "node": {
    "target": "aten::add.Tensor",
    "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}, "kind": 1},
               {"name": "other", "arg": {"as_tensor": {"name": "y"}}, "kind": 1}],
    "outputs": [{"as_tensor": {"name": "buf0"}}], "metadata": {}}}]}


def _rows(spec: Path, out: Path) -> dict[str, list[str]]:
    py = sys.executable
    return {
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import externspec'": [py, "-c", "import externspec"],
        "externspec --help": [py, "-m", "externspec", "--help"],
        "externspec validate small.json": [py, "-m", "externspec", "validate", str(spec)],
        "externspec inspect --no-slots small.json": [py, "-m", "externspec", "inspect", "--no-slots", str(spec)],
        "externspec convert small.json out.bin": [py, "-m", "externspec", "convert", str(spec), str(out)],
        "python -c 'import torch' (for scale)": [py, "-c", "import torch"],
    }


def run() -> list[str]:
    with tempfile.TemporaryDirectory() as d:
        spec, out = Path(d) / "small.json", Path(d) / "out.bin"
        spec.write_text(json.dumps(SPEC))
        rows = _rows(spec, out)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(d) / "pycache")
        for cmd in rows.values():  # warm-up: writes the bytecode caches
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
        best = dict.fromkeys(rows, float("inf"))
        for _ in range(ROUNDS):
            for name, cmd in rows.items():
                start = time.perf_counter()
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
                best[name] = min(best[name], time.perf_counter() - start)
    base = best["python -c pass"]
    lines = [f"CLI startup, fresh process, bytecode cached, best of {ROUNDS} (target: commands <= {TARGET_S} s; "
             f"torch not imported)",
             f"{'command':<44} {'seconds':>8} {'- pass':>8} {'x pass':>7}"]
    for name, t in best.items():
        lines.append(f"{name:<44} {t:8.3f} {t - base:8.3f} {t / base:7.1f}")
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
