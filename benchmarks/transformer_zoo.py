"""The transformer zoo: whole `transformers` models compiled with AOTInductor, run by torch's own
runner and by externspec's, each against eager (issue 34, "Must show"; docs/torch-compat.md,
"Whole transformer models compiled by 2.15").

For each model of benchmarks/transformer_zoo_models.py (small random-weight configs of BERT,
DistilBERT, RoBERTa, GPT-2, Llama, Qwen2, Mistral, Gemma, the T5 encoder, BART, ViT, Swin, the
Whisper encoder, wav2vec2, ConvNeXt and ResNet; with `--group issue`, the MLP, TransformerEncoderLayer(32, 4, 64) and
int64 `add(alpha=3) + 1` of issue 34's table) and each mode of `--modes` (lite:
`torch._inductor.lite_mode_options`, every op without a C shim through the proxy executor; default),
it exports the model, compiles it, then runs the package under

* torch's runner: `torch._inductor.aoti_load_package(path)(*inputs)`,
* es.cpp: `es.cpp.AOTIRunner(path)(*inputs)` (the C++ executor),
* python: the same runner driving the Python executor (`run_flat_with(es.ProxyExecutor(nodes).call_function, ...)`),

and compares each output with eager's (`torch.testing.assert_close`, rtol 1e-4, atol 1e-5: the
tolerance of tests/aoti/test_lite_zoo.py). Compiling and every run are subprocesses with a timeout,
so a crash or a hang is a row, not the end of the survey. It prints a Markdown table: the model, the
mode, the extern-kernel nodes (calls through the proxy executor), then per runner `equal`, or the
error's class and first line (`mismatch` with the largest difference; `crash` with the signal;
`timeout`).

Packages are cached under `~/.cache/externspec-zoo/<key>/` (`--cache`), the key hashing
transformer_zoo_models.py and the torch and transformers versions, so a rerun only runs. Too slow
for CI (10 to 20 s per compile and a few seconds per run on two cores, six minutes for the 16
models in lite mode); run it by hand from the repository root, in an environment with `transformers`
(benchmarks/requirements-zoo.txt), e.g. under torch 2.15:

    nice .venv-torch2.15/bin/python -m benchmarks.transformer_zoo --modes lite
    nice .venv-torch2.15/bin/python -m benchmarks.transformer_zoo --group issue --modes lite,default
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch.utils import _pytree as pytree

from benchmarks.transformer_zoo_models import MODELS, cache_key, compile_model, extern_nodes
from tests.support.package_cache import cached

ROOT = Path(__file__).resolve().parents[1]  # the children run `-m benchmarks.transformer_zoo` from here
RUNNERS = ("torch", "es.cpp", "python")
RTOL, ATOL = 1e-4, 1e-5
NO_CALLS = "n/a: no extern calls"
RESULT = "transformer_zoo result: "  # the child's last line: this prefix, then a JSON object


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:160] if lines else ''}"


def _load_runner(which: str, package: Path) -> Any:
    if which == "torch":
        return torch._inductor.aoti_load_package(str(package))
    import externspec as es

    runner = es.cpp.AOTIRunner(package)
    if which == "es.cpp":
        return runner
    import zipfile

    with zipfile.ZipFile(package) as z:
        specs = [n for n in z.namelist() if n.endswith(".wrapper.json")]
        if not specs:
            return None  # no extern calls: nothing for the Python executor to run
        nodes = es.loads(z.read(specs[0]), es.ExternKernelNodes)
    return lambda *x: runner.run_flat_with(es.ProxyExecutor(nodes).call_function, list(x))


def _compare(got: Any, want: Any) -> str:
    got_leaves, want_leaves = pytree.tree_leaves(got), pytree.tree_leaves(want)
    try:
        torch.testing.assert_close(got_leaves, want_leaves, rtol=RTOL, atol=ATOL)
    except AssertionError as exc:
        diffs = [(g.double() - w.double()).abs().max().item() for g, w in zip(got_leaves, want_leaves, strict=False)
                 if isinstance(g, torch.Tensor) and isinstance(w, torch.Tensor) and g.shape == w.shape]
        worst = f"max |diff| {max(diffs):.3g}; " if diffs else ""
        return f"mismatch: {worst}{_first_line(exc)}"
    return "equal"


def child(action: str, name: str, mode: str, cache: Path) -> dict[str, Any]:
    """One step in this (child) process: "compile" (unless cached), or a run by one of RUNNERS."""
    package, io = cache / f"{name}.{mode}.pt2", cache / f"{name}.{mode}.io.pt"
    if action == "compile":
        start = time.monotonic()
        # Built in a temporary folder under its own name (torch names the package's top folder
        # after the file), then moved into place: an interrupted compile leaves nothing.
        cached(package, lambda tmp: compile_model(MODELS[name], mode, tmp, io))
        return {"nodes": extern_nodes(package), "seconds": round(time.monotonic() - start, 1)}
    saved = torch.load(io, weights_only=True)
    runner = _load_runner(action, package)
    if runner is None:
        return {"result": NO_CALLS}
    with torch.no_grad():
        return {"result": _compare(runner(*saved["inputs"]), saved["want"])}


def _child_main(argv: list[str]) -> int:
    action, name, mode, cache = argv
    try:
        result = child(action, name, mode, Path(cache))
    except Exception as exc:  # the survey's row: any failure of the step, as its class and first line
        result = {"error": _first_line(exc)}
    print(RESULT + json.dumps(result), flush=True)
    return 0


def _spawn(action: str, name: str, mode: str, cache: Path, timeout: float) -> dict[str, Any]:
    """A child step in a subprocess of its own session: its result, or what became of the process
    (on a timeout the whole session is killed, the compiler processes a compile started too)."""
    cmd = [sys.executable, "-m", "benchmarks.transformer_zoo", "--child", action, name, mode, str(cache)]
    with subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return {"error": f"timeout after {timeout:.0f} s"}
    lines = [line for line in out.splitlines() if line.startswith(RESULT)]
    if lines:
        return dict(json.loads(lines[-1][len(RESULT):]))
    if proc.returncode < 0:
        return {"error": f"crash: {signal.Signals(-proc.returncode).name}"}
    tail = (err.strip().splitlines() or [""])[-1]
    return {"error": f"exit {proc.returncode}: {tail[:160]}"}


def survey(names: list[str], modes: list[str], cache: Path, timeout: float) -> list[list[str]]:
    """Compile and run every model in every mode, one subprocess at a time; a row per pair."""
    rows = []
    for name in names:
        for mode in modes:
            built = _spawn("compile", name, mode, cache, timeout)
            if "error" in built:
                rows.append([name, mode, "-", f"not compiled: {built['error']}", *["-"] * (len(RUNNERS) - 1)])
            else:
                results = [_spawn(r, name, mode, cache, timeout) for r in RUNNERS]
                rows.append([name, mode, str(built["nodes"]), *[r.get("result", r.get("error", "")) for r in results]])
            print(f"# {' | '.join(rows[-1])} (compile {built.get('seconds', '-')} s)", file=sys.stderr, flush=True)
    return rows


def table(rows: list[list[str]]) -> list[str]:
    header = ["model", "mode", "extern nodes", "torch's runner", "es.cpp.AOTIRunner (C++ executor)",
              "es.cpp.AOTIRunner (Python executor)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    cells = [[row[3 + i] for row in rows if row[3 + i] != NO_CALLS] for i in range(len(RUNNERS))]
    lines.append("")
    counts = [f"{r} {c.count('equal')}/{len(c)}" for r, c in zip(RUNNERS, cells, strict=True)]
    lines.append("equal to eager: " + ", ".join(counts))
    return lines


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.transformer_zoo", description=__doc__.split("\n\n")[0])
    p.add_argument("--group", choices=["transformers", "issue"], default="transformers",
                   help="the transformers models (default), or the three models of issue 34's table")
    p.add_argument("--models", help="comma-separated model names (default: every model of the group)")
    p.add_argument("--modes", default="lite", help="comma-separated: lite, default (default: lite)")
    p.add_argument("--timeout", type=float, default=900, help="seconds per compile and per run (default 900)")
    p.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "externspec-zoo",
                   help="where packages are kept, under a folder per key (default ~/.cache/externspec-zoo)")
    return p.parse_args(argv)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        return _child_main(argv[1:])
    args = parse_args(argv)
    names = args.models.split(",") if args.models else [n for n, m in MODELS.items() if m.group == args.group]
    modes = args.modes.split(",")
    unknown = sorted(set(names) - set(MODELS)) + sorted(set(modes) - {"lite", "default"})
    if unknown:
        print(f"unknown models or modes: {', '.join(unknown)} (models: {', '.join(MODELS)}; modes: lite, default)",
              file=sys.stderr)
        return 2
    import transformers

    import externspec as es

    es.cpp.extension()  # es.cpp is built (or loaded from its cache) here, outside the runs' timeout
    cache = args.cache / cache_key()
    cache.mkdir(parents=True, exist_ok=True)
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, packages in {cache}", flush=True)
    print("\n".join(table(survey(names, modes, cache, args.timeout))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
