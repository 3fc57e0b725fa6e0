"""Build and run the libFuzzer targets: the C++ decoder per JSON backend (tests/fuzz/fuzz_decode.cpp),
the C++ executor's load path against libtorch (tests/fuzz/fuzz_executor_load.cpp), a model library's
ELF tables as the runner reads them (fuzz_elf_symbols.cpp) and the Triton backend's config.pbtxt scan
(fuzz_pbtxt.cpp).

    python tests/fuzz/run_fuzz.py --seconds 60 [--target nlohmann|simdjson|executor|thrift|elf|pbtxt]
    (or: make fuzz FUZZ_SECONDS=60)

* Built by CMakeLists.txt with EXTERNSPEC_FUZZ (tests/fuzz/CMakeLists.txt: Debian's clang,
  `-fsanitize=fuzzer,address,undefined`, UB is fatal; the executor target links the executor's
  sources of csrc/ and libtorch as the runtime library does), into a folder of <cache>/fuzz/
  (`$EXTERNSPEC_CACHE_DIR`, else .cache/) named by a hash of what the build reads (csrc/, the
  shipped headers, the build files, the harnesses), the compiler and the torch version.
* Decoder seeds: the conformance corpus (tests/conformance/valid|invalid, one type byte prepended as
  the target expects). Executor seeds: the corpus's ExternKernelNodes documents, the released
  ExternKernelNodes payloads (tests/compat/payloads) and specs `es.SpecBuilder` writes for aten
  calls. Both also replay the reproducers of past crashes (tests/fuzz/regressions/ for the decoder,
  tests/fuzz/regressions-executor/ for the executor). The corpus libFuzzer grows is kept in
  <cache>/fuzz/corpus-<target>/ so that later runs start where earlier ones stopped. A dictionary
  of the schema's keys and wire literals is generated from the models (plus op names and metadata
  keys for the executor).
* A crash leaves its input in <cache>/fuzz/artifacts-<target>/; copy it to the target's regressions
  directory once fixed, so every later run and the test replay it.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import re
import resource
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
THRIFT = HERE / "fuzz_thrift.py"
# The CMake target of each compiled target (tests/fuzz/CMakeLists.txt).
EXECUTABLES = {"nlohmann": "fuzz_decode_nlohmann", "simdjson": "fuzz_decode_simdjson", "executor": "fuzz_executor_load",
               "elf": "fuzz_elf_symbols", "pbtxt": "fuzz_pbtxt"}
REGRESSIONS = {"decode": HERE / "regressions", "executor": HERE / "regressions-executor",
               "thrift": HERE / "regressions-thrift", "elf": HERE / "regressions-elf",
               "pbtxt": HERE / "regressions-pbtxt"}
CONFORMANCE = ROOT / "tests" / "conformance"
PAYLOADS = ROOT / "tests" / "compat" / "payloads"
BACKENDS = ("nlohmann", "simdjson")
TARGETS = (*BACKENDS, "executor", "thrift", "elf", "pbtxt")
# Index = the type byte of an input; keep in step with kTypes in fuzz_decode.cpp and TYPES in fuzz_thrift.py.
TYPES = ("ExternKernelNodes", "ExportedProgram", "Node", "Argument", "Graph", "TensorMeta", "Device",
         "ExternKernelNode")
COMPILER = os.environ.get("FUZZ_CXX", "clang++")
MAX_LEN = 32768  # bytes per input: room for documents nested past the depth limit
RSS_LIMIT_MB = 2048  # the memory one fuzz run may use beyond what it inherits


@dataclass
class FuzzResult:
    """What one libFuzzer run did."""

    backend: str
    executions: int
    seconds: int
    crashes: list[Path] = field(default_factory=list)
    log: str = ""


def cache() -> Path:
    from externspec._cache import cache_dir

    return cache_dir() / "fuzz"


def _kind(target: str) -> str:
    if target not in TARGETS:
        raise ValueError(f"unknown fuzz target {target!r}: expected one of {', '.join(TARGETS)}")
    return target if target in ("executor", "thrift", "elf", "pbtxt") else "decode"


def build(target: str) -> Path:
    """Build the fuzz target (`nlohmann`, `simdjson`: the decoder; `executor`: the executor's load
    path) with CMakeLists.txt unless an identical build is cached. `thrift` is a Python script
    (atheris): nothing to build."""
    from externspec.cpp import _cmake

    if _kind(target) == "thrift":
        return THRIFT
    if shutil.which(COMPILER) is None:
        raise RuntimeError(f"{COMPILER} not found: install Debian's clang and libclang-rt-14-dev (see `make fuzz`)")
    compiler = subprocess.run([COMPILER, "--version"], capture_output=True, text=True, check=True).stdout
    inputs = [*_cmake.BUILD_INPUTS, *(str(p.relative_to(ROOT)) for p in sorted(HERE.glob("*.cpp"))),
              str((HERE / "CMakeLists.txt").relative_to(ROOT))]
    build_dir = cache() / f"build-{_cmake.source_hash(inputs, (compiler, importlib.metadata.version('torch')))}"
    _cmake.build(build_dir, ["-DEXTERNSPEC_FUZZ=ON", "-DEXTERNSPEC_PYTHON=OFF", f"-DCMAKE_CXX_COMPILER={COMPILER}",
                             f"-DPython_EXECUTABLE={sys.executable}"],
                 EXECUTABLES[target], what=f"the fuzz target {target}")
    return build_dir / "tests" / "fuzz" / EXECUTABLES[target]


def write_seeds(directory: Path, target: str = "nlohmann") -> int:
    """The seed inputs of `target`: for the decoder the conformance corpus, a type byte (strict bit
    clear or set) + the document; for the executor whole ExternKernelNodes documents."""
    if _kind(target) == "executor":
        return write_executor_seeds(directory)
    if _kind(target) == "thrift":
        return write_thrift_seeds(directory)
    if _kind(target) == "elf":
        return write_elf_seeds(directory)
    if _kind(target) == "pbtxt":
        return write_pbtxt_seeds(directory)
    manifest = json.loads((CONFORMANCE / "manifest.json").read_text(encoding="utf-8"))
    directory.mkdir(parents=True, exist_ok=True)
    count = 0
    for kind, name, type_name in _corpus_entries(manifest):
        if type_name not in TYPES:
            continue
        data = (CONFORMANCE / kind / name).read_bytes()
        for strict in (0, 0x80):
            (directory / f"{kind}-{name}-{strict:x}").write_bytes(bytes([TYPES.index(type_name) | strict]) + data)
            count += 1
    return count


def _corpus_entries(manifest: dict[str, Any]) -> list[tuple[str, str, str]]:
    entries = [("valid", n, t) for n, t in manifest["valid"].items()]
    return entries + [("invalid", n, e["type"]) for n, e in manifest["invalid"].items()]


def exporter_specs() -> dict[str, str]:
    """Specs `es.SpecBuilder` writes for a spread of aten calls: every argument member the ABI has
    (tensors, tensor lists, optional tensors, ints, int lists, floats, bools, strings, scalar types,
    layouts, memory formats, devices, None), list and int returns, and the op-schema metadata."""
    import torch

    import externspec as es

    aten = torch.ops.aten
    x, y = torch.ones(2, 3), torch.ones(3, 2)
    calls: dict[str, list[tuple[Any, tuple[Any, ...], dict[str, Any]]]] = {
        "arith": [(aten.add.Tensor, (x, x), {"alpha": 2}), (aten.mul.Scalar, (x, 1.5), {}),
                  (aten.mm.default, (x, y), {}), (aten.addmm.default, (torch.ones(2), x, y), {"beta": 0.5})],
        "lists": [(aten.cat.default, ([x, x], 1), {}), (aten.split.Tensor, (torch.ones(6), 2), {}),
                  (aten.index.Tensor, (x, [torch.tensor([0, 1]), None]), {}),
                  (aten.sym_size.int, (x, 1), {})],
        "factories": [(aten.empty.memory_format, ([2, 3],), {"dtype": torch.float16, "layout": torch.strided,
                                                             "device": torch.device("cpu"),
                                                             "memory_format": torch.contiguous_format}),
                      (aten.full.default, ([2], 3.0), {"dtype": torch.int64}),
                      (aten.arange.start_step, (0, 10, 2), {})],
        "misc": [(aten.convolution.default, (torch.ones(1, 1, 4, 4), torch.ones(1, 1, 2, 2), None, [1, 1],
                                             [0, 0], [1, 1], False, [0, 0], 1), {}),
                 (aten.div.Tensor_mode, (x, x), {"rounding_mode": "floor"}),
                 (aten.native_layer_norm.default, (x, [3], None, None, 1e-5), {}),
                 (aten.topk.default, (x, 2), {"largest": False, "sorted": True})],
    }
    out = {}
    for name, group in calls.items():
        for omit in (False, True):
            builder = es.SpecBuilder(omit_defaults=omit)
            for op, args, kwargs in group:
                builder.add(op, args, kwargs)
            out[f"exporter-{name}-{'omit' if omit else 'full'}"] = es.dumps(builder.build())
    return out


def write_thrift_seeds(directory: Path) -> int:
    """Every valid conformance document of a type fuzz_thrift.py knows, in both Thrift protocols,
    behind its type/protocol byte (strict bit clear and set)."""
    import externspec as es
    from externspec import thrift

    manifest = json.loads((CONFORMANCE / "manifest.json").read_text(encoding="utf-8"))
    directory.mkdir(parents=True, exist_ok=True)
    count = 0
    for name, type_name in manifest["valid"].items():
        if type_name not in TYPES:
            continue
        doc = es.loads((CONFORMANCE / "valid" / name).read_bytes(), getattr(es, type_name))
        for p, protocol in enumerate(thrift.PROTOCOLS):
            data = thrift.dumps(doc, protocol)
            for strict in (0, 0x80):
                (directory / f"{name}-{protocol}-{strict:x}").write_bytes(
                    bytes([TYPES.index(type_name) | p << 4 | strict]) + data)
                count += 1
    return count


def write_elf_seeds(directory: Path) -> int:
    """Small shared libraries the C compiler writes (under MAX_LEN: a model library is hundreds of KB),
    one importing and exporting names, stripped and not, for the ELF reader."""
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / "lib.c"
    source.write_text("void aoti_torch_f(void);\nvoid AOTInductorModelRun(void) { aoti_torch_f(); }\n")
    count = 0
    for flags in ([], ["-s"]):
        out = directory / f"lib{''.join(flags)}.so"
        subprocess.run(["cc", "-shared", "-fPIC", "-O1", *flags, str(source), "-o", str(out)], check=True)
        count += 1
    source.unlink()
    return count


def write_pbtxt_seeds(directory: Path) -> int:
    """config.pbtxt texts of the served test models (tests/support/triton_models.py's lines), each
    within MAX_LEN."""
    directory.mkdir(parents=True, exist_ok=True)
    texts = ['name: "m"\nbackend: "externspec"\nmax_batch_size: 16\n'
             'dynamic_batching { max_queue_delay_microseconds: 200 }\n',
             'backend: "externspec"\ninput [{ name: "INPUT__0", data_type: TYPE_FP32, dims: [8] }]\n',
             'parameters { key: "call_layout" value: { string_value: "auto" } }\n# max_batch_size: 0\n',
             "instance_group [{ count: 2, kind: KIND_CPU }]\n" + " " * 4096 + "\n" * 4096]
    for i, text in enumerate(texts):
        (directory / f"config-{i}.pbtxt").write_text(text)
    return len(texts)


def write_executor_seeds(directory: Path) -> int:
    manifest = json.loads((CONFORMANCE / "manifest.json").read_text(encoding="utf-8"))
    directory.mkdir(parents=True, exist_ok=True)
    seeds = {f"{kind}-{name}": (CONFORMANCE / kind / name).read_bytes()
             for kind, name, type_name in _corpus_entries(manifest) if type_name == "ExternKernelNodes"}
    for index in sorted(PAYLOADS.glob("*/index.json")):
        for entry in json.loads(index.read_text(encoding="utf-8")):
            if entry["type"] == "ExternKernelNodes":
                seeds[f"payload-{index.parent.name}-{entry['path']}"] = (index.parent / entry["path"]).read_bytes()
    seeds.update({name: text.encode() for name, text in exporter_specs().items()})
    for name, data in seeds.items():
        (directory / name).write_bytes(data)
    return len(seeds)


def write_dictionary(path: Path, target: str = "nlohmann") -> None:
    """libFuzzer dictionary: every key of the schema and the wire's special literals; for the
    executor also op names and the node-metadata keys it reads."""
    from pydantic import BaseModel

    import externspec as es

    keys: set[str] = {"schema_version", "major", "minor"}
    for name in es._model_names:
        obj = getattr(es, name)
        if isinstance(obj, type) and issubclass(obj, BaseModel):
            keys.update(obj.model_fields)
    literals = ['"Infinity"', '"-Infinity"', '"NaN"', "null", "true", "false", "9223372036854775808",
                "-9223372036854775809", "1e400", '"\\ud800"', "{}", "[]"]
    if _kind(target) == "thrift":
        # Binary and compact headers announcing huge lists and strings, and stop bytes.
        headers = [b"\x0f\x00\x0a\x0c\x7f\xff\xff\xff", b"\x0b\x00\x01\x7f\xff\xff\xff", b"\xff\xff\xff\xff\x0f",
                   b"\xfc\xff\xff\xff\xff\x0f", b"\x19\xfc", b"\x18\xff\xff\xff\xff\x0f", b"\x00\x00",
                   b"\x80" * 9 + b"\x01", b"\x00\x00\x00\x00"]
        escaped = ("".join(f"\\x{b:02x}" for b in v) for v in headers)
        path.write_text("".join(f'h_{i}="{v}"\n' for i, v in enumerate(escaped)), encoding="ascii")
        return
    if _kind(target) in ("elf", "pbtxt"):
        tokens = [b"\x7fELF\x02\x01\x01", b"\x0b\x00\x00\x00", b"\x18\x00\x00\x00\x00\x00\x00\x00",
                  b"\x40\x00"] if target == "elf" else \
            [b"max_batch_size", b":", b"{", b"}", b"[", b"]", b"<", b">", b"#", b'"', b"'", b"\\", b"\n"]
        escaped = ("".join(f"\\x{b:02x}" for b in v) for v in tokens)
        path.write_text("".join(f'{target}_{i}="{v}"\n' for i, v in enumerate(escaped)), encoding="ascii")
        return
    if _kind(target) == "executor":
        keys.update({"externspec.op_schema", "externspec.wrapped_numbers", "torch_library_custom_op",
                     "aten::add.Tensor", "aten::empty.memory_format", "aten::from_file", "aten::native_batch_norm",
                     "call_torchbind", "prim::Constant", "aten::_foreach_add.List", "aten::index_put_"})
        literals += ['"Tensor(a!) self"', '"Tensor?[]"', '"SymInt[]"', '"-> Tensor"', '"int[2]"', '"Scalar"']
    lines = [f"k_{i}={json.dumps(json.dumps(k))}" for i, k in enumerate(sorted(keys))]
    lines += [f"l_{i}={json.dumps(v)}" for i, v in enumerate(literals)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run(target: str, seconds: int, *, jobs_dir: Path | None = None) -> FuzzResult:
    """Fuzz `target` (a decoder backend or `executor`) for `seconds` seconds; returns executions and
    any crash inputs."""
    exe = build(target)
    # atheris targets run under this Python (where externspec and atheris are installed).
    command = [sys.executable, str(exe)] if exe.suffix == ".py" else [str(exe)]
    work = jobs_dir or cache()
    seeds = work / f"seeds-{_kind(target)}"
    write_seeds(seeds, target)
    corpus = work / f"corpus-{target}"
    corpus.mkdir(parents=True, exist_ok=True)
    artifacts = work / f"artifacts-{target}"
    artifacts.mkdir(parents=True, exist_ok=True)
    before = set(artifacts.iterdir())
    dictionary = work / f"{_kind(target)}.dict"
    write_dictionary(dictionary, target)
    regressions = REGRESSIONS[_kind(target)]
    dirs = [corpus, seeds] + ([regressions] if regressions.is_dir() else [])
    # libFuzzer's RSS check reads getrusage's peak, which Linux carries across fork and exec: a child
    # of a process that once held 3 GB (a pytest worker after a big test) starts "using" 3 GB. So
    # the limit is 2 GB above what this process has peaked at, and one allocation may not exceed 2 GB.
    inherited_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    cmd = [*command, f"-max_total_time={seconds}", f"-max_len={MAX_LEN}", "-timeout=10",
           f"-rss_limit_mb={RSS_LIMIT_MB + inherited_mb}", f"-malloc_limit_mb={RSS_LIMIT_MB}",
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
    return FuzzResult(target, executions, seconds, crashes, log)


def replay(target: str, inputs: list[Path]) -> subprocess.CompletedProcess[str]:
    """Run the target once over each file (no fuzzing): regression inputs must not crash."""
    exe = build(target)
    command = [sys.executable, str(exe)] if exe.suffix == ".py" else [str(exe)]
    return subprocess.run([*command, *map(str, inputs)], capture_output=True, text=True, timeout=600)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=int(os.environ.get("FUZZ_SECONDS", "60")),
                        help="time budget per target (default: $FUZZ_SECONDS or 60)")
    parser.add_argument("--target", "--backend", dest="targets", choices=TARGETS, action="append",
                        help="default: all (both decoder backends, the executor, the Thrift decoder)")
    args = parser.parse_args(argv)
    failed = False
    for target in args.targets or TARGETS:
        result = run(target, args.seconds)
        print(f"{target:9} {result.executions:>10} executions in {result.seconds} s, "
              f"{len(result.crashes)} crash(es)")
        for crash in result.crashes:
            failed = True
            print(f"  crash input: {crash}")
        if result.crashes:
            print(result.log[-6000:], file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
