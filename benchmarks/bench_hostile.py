"""Worst-case hostile inputs through the decoders: outcome, time and peak memory per input byte.

Each case runs in a fresh child process under an address-space limit (RLIMIT_AS), so a blow-up
shows as a MemoryError instead of taking the machine; peak RSS is the growth of the child's
high-water mark (VmHWM, reset through /proc/self/clear_refs once imports are done and the input is
read) over its RSS then. The C++ cases decode with the default backend through
benchmarks/cpp/peak_rss.cpp (below) under the same limit. SECURITY.md quotes this table; the goal
is peak RSS <= 10x the input and linear time.

A second table takes ~25 MB documents of one repeated element each (`[0,0,...]` as `as_ints`,
`[[],[],...]`, `[{},{},...]`, many short strings) through every decoder: `es.loads`, the C++
decoder with each backend (benchmarks/cpp/peak_rss.cpp: the file read into a string of its size,
then one decode; the growth over the state after the read) and torch's own loaders (Python:
`json.loads` + `_dict_to_dataclass`; C++: generated_serialization_types.h) and the Thrift codecs
(the same document re-encoded in the binary and compact protocols), and prints peak RSS over the
size of the input each decoder read.

    python benchmarks/bench_hostile.py          (or: python benchmarks/run.py bench_hostile)

`EXTERNSPEC_BENCH_PYTHONPATH` points the Python children at another checkout's python/ (the
"before" column of a fix; for C++, run this file from the other checkout).
"""

from __future__ import annotations

import functools
import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.support.hostile_inputs import benign_keys, flooding_keys, node_with_metadata  # noqa: E402

LIMIT_BYTES = 3 << 30  # address space of each child
TIMEOUT = 120


def _version_doc() -> bytes:
    return b'{"schema_version": {"major": -1000000000000000, "minor": 0}, "nodes": []}'


def _type_errors(size: int) -> bytes:
    return b'{"nodes": [' + b",".join([b"0"] * (size // 2)) + b"]}"


def _unknown_keys(size: int) -> bytes:
    keys = (f'"k{i}": 0' for i in range(size // 10))
    return ('{"nodes": [], ' + ", ".join(keys) + "}").encode()


def _thrift_empty_structs(protocol: str, size: int) -> bytes:
    """ExternKernelNodes whose `nodes` list holds `size` empty structs (one stop byte each)."""
    n = size - 16
    if protocol == "compact":
        varint = bytearray()
        v = n
        while v >= 0x80:
            varint.append((v & 0x7F) | 0x80)
            v >>= 7
        varint.append(v)
        return bytes([0xA9, 0xFC]) + bytes(varint) + b"\0" * n + b"\0"
    return bytes([15]) + (10).to_bytes(2, "big") + bytes([12]) + n.to_bytes(4, "big") + b"\0" * n + b"\0"


def _unterminated_calls() -> bytes:
    """Wrapper source of proxy-executor calls that never close (a search over the whole text took
    53 s for 0.68 MB)."""
    return b"aoti_torch_proxy_executor_call_function(proxy_executor, 1, 1, std::array<int64_t, 1>{" * 7_900


def _inflating_package(source_bytes: int) -> bytes:
    """An AOTInductor package (as `aoti.read_package` reads it) whose wrapper.cpp inflates from
    ~1/1000 of its size: blanks, deflated."""
    import io
    import zipfile

    out = io.BytesIO()
    stem = "pkg/data/aotinductor/model/m.wrapper"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"{stem}.json", '{"nodes": []}')
        with z.open(f"{stem}.cpp", "w", force_zip64=True) as f:
            chunk = b" " * (1 << 20)
            for _ in range(source_bytes >> 20):
                f.write(chunk)
    return out.getvalue()


def _thrift_version_doc(major: int) -> bytes:
    import externspec as es
    from externspec import thrift

    doc = es.ExternKernelNodes(nodes=[], schema_version=es.SchemaVersion(major=major, minor=0))
    return thrift.dumps(doc, "binary")


def _package(edit: Callable[[str], tuple[bytes, int] | None]) -> bytes:
    """The runner test package (tests/support/cpp_models.py, `runner_blob`) with each member
    passed through `edit(name)`: None keeps it, (data, compress_type) replaces it."""
    import io
    import zipfile

    from tests.support import cpp_models

    out = io.BytesIO()
    with zipfile.ZipFile(cpp_models.package("runner_blob")) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            item = edit(info.filename)
            data, compress = item if item is not None else (src.read(info.filename), zipfile.ZIP_STORED)
            dst.writestr(info.filename, data, compress_type=compress)
    return out.getvalue()


def _package_member(suffix: str, data: Callable[[], bytes]) -> Callable[[], bytes]:
    """A package whose member ending in `suffix` holds `data()`, deflated."""
    import zipfile

    return lambda: _package(lambda name: (data(), zipfile.ZIP_DEFLATED) if name.endswith(suffix) else None)


def _long_shape_line() -> bytes:
    """The wrapper source with a 60 MiB `assert_size_stride` line for its first input."""
    import re
    import zipfile

    from tests.support import cpp_models

    with zipfile.ZipFile(cpp_models.package("runner_blob")) as z:
        source = z.read(next(n for n in z.namelist() if n.endswith(".wrapper.cpp")))
    var = re.search(rb"assert_size_stride\((\w+), ", source).group(1)  # type: ignore[union-attr]
    ones = b", ".join([b"1"] * (10 << 20))  # 30 MiB: sizes and strides make 60 MiB
    return source + b"assert_size_stride(" + var + b", {" + ones + b"}, {" + ones + b'}, "input");\n'


def _zip_case(kind: str) -> Callable[[], bytes]:
    """Issue 36's packages, the runner test package written byte by byte (tests/support/zips.py):
    `two-directories` (the classic record names its directory, a zip64 record a second one whose
    `.data/version` inflates to 512 MiB), `two-extras` (`.data/version` of 512 MiB recorded as
    0xFFFFFFFF, with zip64 extra fields giving 4 GiB - 1 and then 2 bytes), `capitals` (512 MiB as
    `.data/VERSION` in place of `.data/version`), `objs-config` (16 MiB of `[` as `custom_objs_config.json`)."""
    def build() -> bytes:
        from dataclasses import replace

        from tests.support import cpp_models, zips

        clean = zips.members_of(cpp_models.package("runner_blob"))
        top = clean[0].top
        bomb = zips.Member(b".data/version", b"0" * (512 << 20), method=8, top=top)
        if kind == "two-directories":
            return zips.two_directories(clean, [m if m.name != b".data/version" else bomb for m in clean])
        if kind == "two-extras":
            lying = replace(bomb, size=zips.SAT, extra=zips.zip64_extra(zips.SAT) + zips.zip64_extra(2))
            return zips.archive([m if m.name != b".data/version" else lying for m in clean], zip64=True)
        if kind == "capitals":
            capitals = replace(bomb, name=b".data/VERSION")
            return zips.archive([m if m.name != b".data/version" else capitals for m in clean], zip64=True)
        config = zips.Member(b"data/aotinductor/model/custom_objs_config.json", b"[" * (16 << 20), method=8, top=top)
        return zips.archive([*clean, config], zip64=True)
    return build


def _extern_output_returning_0d() -> bytes:
    """Issue 36 item 5: the `extern_output` test package whose extern call is edited (in
    `*.wrapper.json` alone) to return a 0-D tensor where the compiled code expects 2048x2048."""
    from tests.support import cpp_models

    with tempfile.TemporaryDirectory() as tmp:
        return cpp_models.extern_output_returning_0d(Path(tmp) / "zero_d.pt2").read_bytes()


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], bytes]
    call: str  # Python: the decode statement over `data`; C++: "cpp:<Type>"
    setup: str = ""  # Python: run before the measurement


PY_LOADS = "es.loads(data, es.ExternKernelNodes)"
RUNNER_SETUP = "es.cpp.extension()"
RUNNER_LOAD = "es.cpp.AOTIRunner(sys.argv[1])"
CASES = (
    Case("schema_version.major = -10**15 (JSON)", _version_doc, PY_LOADS),
    Case("schema_version.major = -10**15 (Thrift)", lambda: _thrift_version_doc(-10**15),
         "thrift.loads(data, es.ExternKernelNodes, 'binary')"),
    Case("1 MB of type errors", lambda: _type_errors(1 << 20), PY_LOADS),
    Case("1 MB of type errors", lambda: _type_errors(1 << 20), "cpp:ExternKernelNodes"),
    Case("5 MB unversioned, unknown keys", lambda: _unknown_keys(5 << 20), PY_LOADS),
    Case("1 MB Thrift compact, empty structs", lambda: _thrift_empty_structs("compact", 1 << 20),
         "thrift.loads(data, es.ExternKernelNodes, 'compact')"),
    Case("1 MB Thrift binary, empty structs", lambda: _thrift_empty_structs("binary", 1 << 20),
         "thrift.loads(data, es.ExternKernelNodes, 'binary')"),
    Case("20k flooding map keys", lambda: node_with_metadata(flooding_keys(20_000)), "cpp:Node"),
    Case("20k benign map keys", lambda: node_with_metadata(benign_keys(20_000)), "cpp:Node"),
    Case("0.68 MB of unterminated wrapper calls", _unterminated_calls,
         "from externspec import aoti; aoti.parse_wrapper_calls(data.decode())"),
    Case("package: 512 MiB wrapper.cpp (deflated)", lambda: _inflating_package(512 << 20),
         "from externspec import aoti; aoti.read_package(sys.argv[1])"),
    # es.cpp.AOTIRunner on a package (the input is the whole .pt2; issue 26 items 3, 4, 10)
    Case("package: 16 MiB of [ as metadata", _package_member(".wrapper_metadata.json", lambda: b"[" * (16 << 20)),
         RUNNER_LOAD, RUNNER_SETUP),
    Case("package: 512 MiB .data/version", _package_member("/.data/version", lambda: b"0" * (512 << 20)),
         RUNNER_LOAD, RUNNER_SETUP),
    Case("package: 60 MiB assert_size_stride line", _package_member(".wrapper.cpp", _long_shape_line),
         RUNNER_LOAD, RUNNER_SETUP),
    # issue 36 items 1-3: the directory torch's reader sees; names as it looks them up; the object list
    Case("package: zip64 record to a 2nd directory", _zip_case("two-directories"), RUNNER_LOAD, RUNNER_SETUP),
    Case("package: two zip64 extras on .data/version", _zip_case("two-extras"), RUNNER_LOAD, RUNNER_SETUP),
    Case("package: 512 MiB .data/VERSION", _zip_case("capitals"), RUNNER_LOAD, RUNNER_SETUP),
    Case("package: 16 MiB of [ as custom_objs_config", _zip_case("objs-config"), RUNNER_LOAD, RUNNER_SETUP),
    # issue 36 item 5: a run, not a load: the extern call's output against what the compiled code expects
    Case("package: extern call returning 0-D (einsum ij->)", _extern_output_returning_0d,
         "runner.run_flat(inputs)",
         f"{RUNNER_SETUP}; import torch; runner = {RUNNER_LOAD}; inputs = [torch.randn(2048, 2048)]"),
)

SHAPE_BYTES = 25_000_000


def _repeated(prefix: bytes, item: bytes, suffix: bytes, size: int = SHAPE_BYTES) -> bytes:
    """`prefix item,item,...,item suffix` of about `size` bytes."""
    n = (size - len(prefix) - len(suffix) + 1) // (len(item) + 1)
    return prefix + b",".join([item] * n) + suffix


def _distinct_strings(prefix: bytes, suffix: bytes, size: int = SHAPE_BYTES) -> bytes:
    """`prefix "0","1",...,"<hex>" suffix` of about `size` bytes: no two strings alike (no parser
    can share them)."""
    out = bytearray(prefix)
    i = 0
    while len(out) < size - len(suffix) - 12:
        out += b'"%x",' % i
        i += 1
    return bytes(out[:-1]) + suffix


@dataclass(frozen=True)
class Shape:
    name: str
    type_name: str  # ExternKernelNodes or Argument: a type every decoder (torch's too) has
    build: Callable[[], bytes]


SHAPES = (
    Shape("[0,0,...] as as_ints", "Argument", lambda: _repeated(b'{"as_ints": [', b"0", b"]}")),
    Shape('[{"name":""},...] as as_tensors', "Argument",
          lambda: _repeated(b'{"as_tensors": [', b'{"name":""}', b"]}")),
    Shape('[{"as_none":true},...] optional', "Argument",
          lambda: _repeated(b'{"as_optional_tensors": [', b'{"as_none":true}', b"]}")),
    Shape('[{"as_int":0},...] as as_sym_ints', "Argument",
          lambda: _repeated(b'{"as_sym_ints": [', b'{"as_int":0}', b"]}")),
    Shape('[{"as_bool":true},...] sym_bools', "Argument",
          lambda: _repeated(b'{"as_sym_bools": [', b'{"as_bool":true}', b"]}")),
    Shape("[true,true,...] as as_bools", "Argument", lambda: _repeated(b'{"as_bools": [', b"true", b"]}")),
    Shape("[[],[],...] as as_int_lists", "Argument", lambda: _repeated(b'{"as_int_lists": [', b"[]", b"]}")),
    Shape("[{},{},...] as nodes", "ExternKernelNodes", lambda: _repeated(b'{"nodes": [', b"{}", b"]}")),
    Shape('["a","a",...] as as_strings', "Argument", lambda: _repeated(b'{"as_strings": [', b'"a"', b"]}")),
    Shape('["0","1",...] distinct strings', "Argument", lambda: _distinct_strings(b'{"as_strings": [', b"]}")),
)
# decoder -> the Python setup and call over `data` and `T` (the type's name), or "cpp:<variant>".
SHAPE_DECODERS = {
    "es.loads": ("", "es.loads(data, getattr(es, T))"),
    "C++ nlohmann": ("cpp:nlohmann", ""),
    "C++ simdjson": ("cpp:simdjson", ""),
    "torch Python": ("import json; from torch._export.serde import schema, serialize",
                     "serialize._dict_to_dataclass(getattr(schema, T), json.loads(data))"),
    "torch C++": ("cpp:torch", ""),
    # The same document re-encoded (in the parent) in each Thrift protocol; the ratio is over that size.
    "Thrift binary": ("thrift:binary", "thrift.loads(data, getattr(es, T), 'binary')"),
    "Thrift compact": ("thrift:compact", "thrift.loads(data, getattr(es, T), 'compact')"),
}

_CHILD = """
import os, sys, time
if os.environ.get('EXTERNSPEC_BENCH_PYTHONPATH'):
    # externspec from that checkout: an editable install's finder would answer before PYTHONPATH
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != 'ScikitBuildRedirectingFinder']
sys.path.insert(0, {root!r})
from benchmarks.timing import peak_rss_growth
data = open(sys.argv[1], 'rb').read()
T = sys.argv[2] if len(sys.argv) > 2 else None
import externspec as es
from externspec import thrift
{setup}
def call():
    start = time.perf_counter()
    try:
        {call}
        outcome = 'accepted'
    except MemoryError:
        outcome = 'MemoryError'
    except Exception as e:
        outcome = f'{{type(e).__name__}}: {{str(e)[:90]}}'
    return time.perf_counter() - start, outcome
(elapsed, outcome), peak = peak_rss_growth(call)  # the imports and the read input are not counted
print(f'{{elapsed}}\\t{{peak}}\\t{{outcome}}')
"""


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def measure(case: Case, path: Path) -> tuple[float, int, str]:
    """(seconds, peak RSS growth in bytes, outcome) of one case in a fresh child."""
    if case.call.startswith("cpp:"):  # the default backend, as the executor and the runner use it
        return _run_child([str(_peak_rss_program("nlohmann")), case.call[4:], str(path)])
    code = _CHILD.format(root=str(ROOT), setup=case.setup, call=case.call)
    return _run_child([sys.executable, "-c", code, str(path)], _child_env())


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    pythonpath = os.environ.get("EXTERNSPEC_BENCH_PYTHONPATH")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env


def _peak_rss_program(variant: str) -> Path:
    from externspec._cache import cache_dir
    from externspec.cpp_include import compile_flags, link_flags
    from tests.support.cppbuild import build

    source = ROOT / "benchmarks" / "cpp" / "peak_rss.cpp"
    if variant == "torch":
        import importlib.util

        spec = importlib.util.find_spec("torch")
        assert spec is not None and spec.origin is not None
        include = Path(spec.origin).parent / "include"
        flags = ["-DDECODER_TORCH", "-std=c++17", f"-I{include}"]
        deps = [include / "torch" / "csrc" / "utils" / "generated_serialization_types.h"]
    else:
        flags = [f"-DDECODER_{variant.upper()}", *compile_flags(variant), *link_flags(variant)]
        deps = []
    return build(source, cache_dir() / "bench", f"peak_rss-{variant}", [*flags, "-O2"],
                 extra_deps=[*deps, source.with_name("backend.h")])


def _run_child(child: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str]:
    try:
        proc = subprocess.run(child, capture_output=True, text=True, timeout=TIMEOUT, env=env,
                              preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        return TIMEOUT, 0, f"timeout after {TIMEOUT} s"
    if proc.returncode != 0:
        return 0.0, 0, f"exit {proc.returncode}: {proc.stderr.strip()[-90:]}"
    seconds, rss, outcome = proc.stdout.strip().split("\t", 2)
    return float(seconds), int(rss), " ".join(outcome.split())[:100]


def measure_shape(shape: Shape, decoder: str, path: Path) -> tuple[float, int, str, int]:
    """(seconds, peak RSS growth in bytes, outcome, input bytes) of one decoder on one shape, in a
    fresh child. A Thrift decoder reads the document re-encoded in its protocol."""
    setup, call = SHAPE_DECODERS[decoder]
    if setup.startswith("cpp:"):
        return (*_run_child([str(_peak_rss_program(setup[4:])), shape.type_name, str(path)]), path.stat().st_size)
    if setup.startswith("thrift:"):
        encoded = _thrift_encoding(path, shape.type_name, setup.removeprefix("thrift:"))
        if encoded is None:
            return 0.0, 0, "not encodable: an invalid document (the first table has it refused at the list header)", 0
        path = encoded
        setup = ""
    code = _CHILD.format(root=str(ROOT), setup=setup, call=call)
    return (*_run_child([sys.executable, "-c", code, str(path), shape.type_name], _child_env()), path.stat().st_size)


def _thrift_encoding(path: Path, type_name: str, protocol: str) -> Path | None:
    """The JSON document at `path` encoded in `protocol`, written beside it (None if it is invalid)."""
    import externspec as es
    from externspec import thrift

    try:
        model = es.loads(path.read_bytes(), getattr(es, type_name))
    except es.DecodeError:
        return None
    out = path.with_name(f"{path.name}.{protocol}")
    out.write_bytes(thrift.dumps(model, protocol))  # type: ignore[arg-type]
    return out


Measure = Callable[[Path], tuple[float, int, str, int]]


def _table(title: str, inputs: list[tuple[str, Callable[[], bytes], list[tuple[str, Measure]]]],
           name_width: int, decoder_width: int) -> list[str]:
    """One row per (input, decoder): each input is built and written once, each decoder measured
    on it in a fresh child."""
    lines = [title, f"{'input':{name_width}} {'bytes':>9} {'decoder':>{decoder_width}} | {'s':>7} "
                    f"{'peak RSS MB':>11} {'x input':>8} | outcome"]
    with tempfile.TemporaryDirectory() as tmp:
        for name, build, decoders in inputs:
            data = build()
            path = Path(tmp) / "input"
            path.write_bytes(data)
            for decoder, measure_one in decoders:
                seconds, rss, outcome, size = measure_one(path)
                lines.append(f"{name:{name_width}} {size:>9} {decoder:>{decoder_width}} | {seconds:>7.2f} "
                             f"{rss / 1e6:>11.1f} {rss / max(size, 1):>8.1f} | {outcome[:90]}")
    return lines


def _sized(measure_one: Callable[[Case, Path], tuple[float, int, str]], case: Case,
           path: Path) -> tuple[float, int, str, int]:
    return (*measure_one(case, path), path.stat().st_size)


def run_shapes() -> list[str]:
    inputs = [(shape.name, shape.build, [(d, functools.partial(measure_shape, shape, d)) for d in SHAPE_DECODERS])
              for shape in SHAPES]
    title = (f"Peak RSS per input shape (~{SHAPE_BYTES / 1e6:.0f} MB each; fresh process, {LIMIT_BYTES >> 30} GiB "
             "address space; growth over the state after reading the input)")
    return [*_table(title, inputs, 34, 14), "target: peak RSS <= 10x the input"]


def run() -> list[str]:
    inputs = [(case.name, case.build, [("C++" if case.call.startswith("cpp:") else "Python",
                                        functools.partial(_sized, measure, case))]) for case in CASES]
    title = (f"Hostile inputs: each in a fresh process limited to {LIMIT_BYTES >> 30} GiB of address space; "
             "peak RSS growth over the state after imports and reading the input")
    lines = _table(title, inputs, 40, 8)
    lines.append("target: peak RSS <= 10x the input, time linear, a DecodeError/VersionError naming the problem")
    return [*lines, "", *run_shapes()]


if __name__ == "__main__":
    print("\n".join(run_shapes() if sys.argv[1:] == ["--shapes"] else run()))
