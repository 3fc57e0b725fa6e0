"""Build and run the libFuzzer target tests/fuzz/fuzz_decode.cpp for each C++ JSON backend.

    python tests/fuzz/run_fuzz.py --seconds 60 [--backend nlohmann|simdjson]   (or: make fuzz FUZZ_SECONDS=60)

* Built with Debian's clang (`-fsanitize=fuzzer,address,undefined`, UB is fatal), cached in
  .cache/fuzz/ by a hash of the source, the shipped headers, the flags and the compiler.
* Seeded from the conformance corpus (tests/conformance/valid|invalid, one type byte prepended as
  the target expects) plus the reproducers of past crashes (tests/fuzz/regressions/); the corpus
  libFuzzer grows is kept in .cache/fuzz/corpus-<backend>/ so that later runs start where earlier
  ones stopped. A dictionary of the schema's keys and wire literals is generated from the models.
* A crash leaves its input in .cache/fuzz/artifacts-<backend>/; copy it to tests/fuzz/regressions/
  once fixed, so every later run and the test replay it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SOURCE = HERE / "fuzz_decode.cpp"
REGRESSIONS = HERE / "regressions"
CONFORMANCE = ROOT / "tests" / "conformance"
CACHE = ROOT / ".cache" / "fuzz"
BACKENDS = ("nlohmann", "simdjson")
# Index = the type byte of an input; keep in step with kTypes in fuzz_decode.cpp.
TYPES = ("ExternKernelNodes", "ExportedProgram", "Node", "Argument", "Graph", "TensorMeta", "Device",
         "ExternKernelNode")
COMPILER = os.environ.get("FUZZ_CXX", "clang++")
MAX_LEN = 32768  # bytes per input: room for documents nested past the depth limit


@dataclass
class FuzzResult:
    """What one libFuzzer run did."""

    backend: str
    executions: int
    seconds: int
    crashes: list[Path] = field(default_factory=list)
    log: str = ""


def include_dir() -> Path:
    from externspec.cpp_include import get_include

    return Path(get_include())


def flags(backend: str) -> list[str]:
    out = ["-std=c++17", "-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=fuzzer,address,undefined",
           "-fno-sanitize-recover=undefined", f"-I{include_dir()}"]
    if backend == "simdjson":
        out.append("-DFUZZ_SIMDJSON")
    return out


def build(backend: str) -> Path:
    """Compile the target for `backend` unless an identical build is cached."""
    if shutil.which(COMPILER) is None:
        raise RuntimeError(f"{COMPILER} not found: install Debian's clang and libclang-rt-14-dev (see `make fuzz`)")
    cmd_flags = flags(backend)
    h = hashlib.sha256()
    h.update(subprocess.run([COMPILER, "--version"], capture_output=True, text=True, check=True).stdout.encode())
    h.update("\0".join(cmd_flags).encode())
    for dep in [SOURCE, *sorted(include_dir().rglob("*.h"))]:
        h.update(dep.name.encode() + dep.read_bytes())
    exe = CACHE / f"fuzz_decode-{backend}-{h.hexdigest()[:16]}"
    if exe.exists():
        return exe
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = exe.with_name(f"{exe.name}.tmp{os.getpid()}")
    libs = ["-lsimdjson"] if backend == "simdjson" else []
    proc = subprocess.run([COMPILER, *cmd_flags, str(SOURCE), "-o", str(tmp), *libs], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"building the fuzz target ({backend}) failed:\n{proc.stderr[-8000:]}")
    os.replace(tmp, exe)
    return exe


def write_seeds(directory: Path) -> int:
    """The conformance corpus as fuzz inputs: a type byte (strict bit clear) + the document."""
    manifest = json.loads((CONFORMANCE / "manifest.json").read_text(encoding="utf-8"))
    directory.mkdir(parents=True, exist_ok=True)
    count = 0
    entries = [("valid", n, t) for n, t in manifest["valid"].items()]
    entries += [("invalid", n, e["type"]) for n, e in manifest["invalid"].items()]
    for kind, name, type_name in entries:
        if type_name not in TYPES:
            continue
        data = (CONFORMANCE / kind / name).read_bytes()
        for strict in (0, 0x80):
            (directory / f"{kind}-{name}-{strict:x}").write_bytes(bytes([TYPES.index(type_name) | strict]) + data)
            count += 1
    return count


def write_dictionary(path: Path) -> None:
    """libFuzzer dictionary: every key of the schema and the wire's special literals."""
    from pydantic import BaseModel

    import externspec as es

    keys: set[str] = {"schema_version", "major", "minor"}
    for name in es._model_names:
        obj = getattr(es, name)
        if isinstance(obj, type) and issubclass(obj, BaseModel):
            keys.update(obj.model_fields)
    literals = ['"Infinity"', '"-Infinity"', '"NaN"', "null", "true", "false", "9223372036854775808",
                "-9223372036854775809", "1e400", '"\\ud800"', "{}", "[]"]
    lines = [f"k_{i}={json.dumps(json.dumps(k))}" for i, k in enumerate(sorted(keys))]
    lines += [f"l_{i}={json.dumps(v)}" for i, v in enumerate(literals)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run(backend: str, seconds: int, *, jobs_dir: Path | None = None) -> FuzzResult:
    """Fuzz `backend` for `seconds` seconds; returns executions and any crash inputs."""
    exe = build(backend)
    work = jobs_dir or CACHE
    seeds = work / "seeds"
    write_seeds(seeds)
    corpus = work / f"corpus-{backend}"
    corpus.mkdir(parents=True, exist_ok=True)
    artifacts = work / f"artifacts-{backend}"
    artifacts.mkdir(parents=True, exist_ok=True)
    before = set(artifacts.iterdir())
    dictionary = work / "schema.dict"
    write_dictionary(dictionary)
    dirs = [corpus, seeds] + ([REGRESSIONS] if REGRESSIONS.is_dir() else [])
    cmd = [str(exe), f"-max_total_time={seconds}", f"-max_len={MAX_LEN}", "-timeout=10", "-rss_limit_mb=2048",
           "-print_final_stats=1", f"-dict={dictionary}", f"-artifact_prefix={artifacts}/", *map(str, dirs)]
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=1",
           "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=seconds + 300)
    log = proc.stderr
    m = re.search(r"stat::number_of_executed_units:\s*(\d+)", log)
    executions = int(m.group(1)) if m else 0
    crashes = sorted(set(artifacts.iterdir()) - before)
    if proc.returncode != 0 and not crashes:
        crashes = [Path(f"(exit {proc.returncode}, no artifact)")]
    return FuzzResult(backend, executions, seconds, crashes, log)


def replay(backend: str, inputs: list[Path]) -> subprocess.CompletedProcess[str]:
    """Run the target once over each file (no fuzzing): regression inputs must not crash."""
    exe = build(backend)
    return subprocess.run([str(exe), *map(str, inputs)], capture_output=True, text=True, timeout=600)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=int(os.environ.get("FUZZ_SECONDS", "60")),
                        help="time budget per backend (default: $FUZZ_SECONDS or 60)")
    parser.add_argument("--backend", choices=BACKENDS, action="append", help="default: both")
    args = parser.parse_args(argv)
    failed = False
    for backend in args.backend or BACKENDS:
        result = run(backend, args.seconds)
        print(f"{backend:9} {result.executions:>10} executions in {result.seconds} s, "
              f"{len(result.crashes)} crash(es)")
        for crash in result.crashes:
            failed = True
            print(f"  crash input: {crash}")
        if result.crashes:
            print(result.log[-6000:], file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
