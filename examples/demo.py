"""`make demo`: real torch artifacts through externspec, end to end (`python examples/demo.py`).

(a) The contract on a real artifact: a model with a torch.library custom op goes through
    torch.export; its models/model.json is decoded into es.ExportedProgram, summarized, encoded
    again and compared with torch's JSON.
(b) The exporter and executor: every custom-op call of a small model (tensors, lists, optional
    tensors, scalars, strings, dtypes, devices) is captured, exported into one spec file, loaded by
    a fresh ProxyExecutor and replayed from the flat arrays; the table compares each call with eager.
(c) A torch-written extern-kernel file: the model is compiled with AOTInductor (cached under
    .cache/demo/), and the package's *.wrapper.json runs through ProxyExecutor with the arrays its
    generated wrapper passes, compared with eager and with torch's own compiled run.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import sys
import tempfile
import time
import warnings
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import externspec as es
from externspec import aoti
from externspec._cache import cache_dir

NS = "externspec_demo"
_lib = torch.library.Library(NS, "DEF")


def _define(schema: str, impl: Any) -> torch._ops.OpOverload:
    name = schema.split("(")[0]
    _lib.define(schema)
    _lib.impl(name, impl, "CompositeExplicitAutograd")
    torch.library.register_fake(f"{NS}::{name}", impl, lib=_lib)
    return getattr(getattr(torch.ops, NS), name).default


def _blend(x, others, maybe, weight, dims, mode, dtype, device, *, bias=None):
    out = x.to(device) * weight
    for k, t in enumerate(others):
        out = out + (k + 2) * t
    for k, t in enumerate(maybe):
        if t is not None:
            out = out + (k + 5) * t
    if bias is not None:
        out = out + bias
    out = out.sum(dim=dims, keepdim=True) if mode == "sum" else out.mean(dim=dims, keepdim=True)
    return out.to(dtype)


blend = _define(
    "blend(Tensor x, Tensor[] others, Tensor?[] maybe, Scalar weight, int[] dims, str mode, ScalarType dtype, "
    "Device device, *, Tensor? bias=None) -> Tensor",
    _blend,
)


def _split_scale(x, chunks, scale, flags):
    parts = list(x.chunk(chunks, dim=0))
    return [p * scale * (2 if f else 1) for p, f in zip(parts, flags, strict=False)]


split_scale = _define("split_scale(Tensor x, int chunks, float scale, bool[] flags) -> Tensor[]", _split_scale)


def _clip_pair(x, lo, hi, keep):
    clipped = x.clamp(lo, hi)
    return clipped, (x - clipped if keep else None)


clip_pair = _define("clip_pair(Tensor x, float lo, float hi, bool keep) -> (Tensor, Tensor?)", _clip_pair)


@torch.library.custom_op(f"{NS}::shift", mutates_args=())
def shift(x: torch.Tensor, offsets: list[float], label: str = "s") -> torch.Tensor:
    """A torch.library.custom_op (torch marks these `torch_library_custom_op`)."""
    return x + sum(offsets) + len(label)


@shift.register_fake
def _(x: torch.Tensor, offsets: list[float], label: str = "s") -> torch.Tensor:
    return torch.empty_like(x)


class DemoModel(torch.nn.Module):
    """Each custom op reads only model inputs, so its extern calls can be replayed outside the model."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
        a = torch.ops.externspec_demo.blend(x, [x, y], [None, y], 2.5, [1], "mean", torch.float64,
                                            torch.device("cpu"), bias=y)
        b = torch.ops.externspec_demo.blend(y, [], [], 3, [0, 1], "sum", torch.float32, torch.device("cpu"))
        p, q, r = torch.ops.externspec_demo.split_scale(x, 3, 0.5, [True, False, True])
        c, d = torch.ops.externspec_demo.clip_pair(x, -0.5, float("inf"), True)
        s = torch.ops.externspec_demo.shift(y, [0.25, 0.5], "demo")
        return a, b, p, q, r, c, d, s


def inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return torch.randn(6, 4, generator=gen), torch.randn(6, 4, generator=gen)


# ----------------------------------------------------------------------------------------------


class CaptureCustomOps(TorchDispatchMode):
    """Records every call of an externspec_demo op as (op, args, kwargs)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[torch._ops.OpOverload, tuple, dict]] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if func.namespace == NS:
            self.calls.append((func, args, dict(kwargs or {})))
        return func(*args, **(kwargs or {}))


def table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*header), fmt.format(*("-" * w for w in widths)), *(fmt.format(*r) for r in rows)]


def flat(result: Any) -> list[torch.Tensor]:
    out: list[torch.Tensor] = []
    for r in result if isinstance(result, (tuple, list)) else (result,):
        if isinstance(r, torch.Tensor):
            out.append(r)
        elif isinstance(r, (list, tuple)):
            out.extend(flat(r))
    return out


def max_diff(got: list[Any], want: list[torch.Tensor]) -> float:
    if len(got) != len(want):
        return float("inf")
    return max((float((g.double() - w.double()).abs().max()) if g.numel() else 0.0
                for g, w in zip(got, want, strict=True)), default=0.0)


# ----------------------------------------------------------------------------------------------


def part_a(work: Path) -> bool:
    print("\n(a) The contract on a real artifact: torch.export -> models/model.json -> es.ExportedProgram")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = torch.export.export(DemoModel(), inputs())
        path = work / "demo_export.pt2"
        torch.export.save(ep, str(path))
    with zipfile.ZipFile(path) as z:
        (name,) = [n for n in z.namelist() if n.endswith("models/model.json")]
        text = z.read(name)
    t0 = time.perf_counter()
    program = es.loads(text, es.ExportedProgram, source=f"{path.name}!{name}")
    decode_ms = (time.perf_counter() - t0) * 1e3
    graph = program.graph_module.graph
    targets = Counter(n.target for n in graph.nodes)
    kinds = Counter(i.arg.type for n in graph.nodes for i in n.inputs)
    print(f"  {path.name}!{name}: {len(text)} bytes, torch export schema "
          f"{program.schema_version.major}.{program.schema_version.minor}, decoded and validated in {decode_ms:.1f} ms")
    print(f"  {len(graph.nodes)} nodes, {len(graph.tensor_values)} tensor values")
    for target, n in targets.most_common():
        print(f"    {n} x {target}")
    print("  argument kinds: " + ", ".join(f"{k} x{n}" for k, n in kinds.most_common()))
    same = json.loads(es.dumps(program)) == json.loads(text)
    print(f"  es.dumps(program) == torch's JSON (parsed): {same}")
    return same


def part_b(work: Path) -> bool:
    print("\n(b) Exporter and executor: capture every custom-op call, one spec file, replay from the flat arrays")
    x, y = inputs()
    mode = CaptureCustomOps()
    with mode:
        DemoModel()(x, y)
    builder = es.SpecBuilder()
    sites = [builder.add(op, args, kwargs) for op, args, kwargs in mode.calls]
    spec_path = work / "demo_spec.json"
    es.dump(builder.build(), spec_path)
    executor = es.ProxyExecutor(spec_path)  # fresh: only the file is shared
    rows = []
    ok = True
    for (op, args, kwargs), site, node in zip(mode.calls, sites, executor.spec.nodes, strict=True):
        slots = list(site.tensor_args)
        executor.call_function(site.index, site.int_args, slots)
        got = slots[len(slots) - site.num_tensor_outputs:]
        diff = max_diff(got, flat(op(*args, **kwargs)))
        ok = ok and diff == 0.0
        kinds = ",".join(sorted({i.arg.type.removeprefix("as_") for i in node.node.inputs}))
        rows.append([str(site.index), node.node.target, kinds,
                     f"{len(site.int_args)}i/{len(site.tensor_args)}t ({site.num_tensor_outputs} out)", f"{diff:g}"])
    print(f"  spec: {spec_path} ({spec_path.stat().st_size} bytes, schema {es.SCHEMA_VERSION.major}."
          f"{es.SCHEMA_VERSION.minor}), {len(sites)} nodes")
    for line in table(rows, ["node", "target", "argument kinds", "slots", "max |diff| vs eager"]):
        print("  " + line)
    print(f"  verdict: {'PASS' if ok else 'FAIL'}: every call replayed from its arrays "
          f"{'matches' if ok else 'does NOT match'} eager bitwise")
    return ok


def _cache_dir() -> Path:
    return cache_dir() / "demo"


def part_c() -> bool:
    print("\n(c) A torch-written extern-kernel file: AOTInductor package -> *.wrapper.json -> ProxyExecutor")
    key = hashlib.sha256((inspect.getsource(sys.modules[__name__]) + torch.__version__).encode()).hexdigest()[:16]
    package_path = _cache_dir() / f"demo-{key}.pt2"
    if package_path.exists():
        print(f"  cached package: {package_path}")
    else:
        print("  compiling with torch._inductor.aoti_compile_and_package (about a minute on 2 cores) ...")
        t0 = time.perf_counter()
        package_path.parent.mkdir(parents=True, exist_ok=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ep = torch.export.export(DemoModel(), inputs())
            tmp = package_path.with_suffix(".tmp.pt2")
            torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp))
            tmp.replace(package_path)
        print(f"  compiled in {time.perf_counter() - t0:.0f} s: {package_path}")
    package = aoti.read_package(package_path)
    executor = es.ProxyExecutor(package.nodes)
    print(f"  extern file: {len(package.json_text)} bytes, {len(package.nodes.nodes)} nodes, no schema_version "
          f"(torch-written: read under the 1.0 baseline); {len(package.calls)} wrapper calls")
    rows = [[str(c.index), package.nodes.nodes[c.index].node.target, str(list(c.int_args)),
             ", ".join(c.tensor_names)] for c in package.calls]
    for line in table(rows, ["call", "target", "int array", "tensor handles"]):
        print("  " + line)
    x, y = inputs()
    got = aoti.replay_extern_calls(package, executor.call_function, [x, y])
    want = flat(DemoModel()(x, y))
    vs_eager = max_diff(got, want)
    print(f"  externspec executor vs eager: max |diff| = {vs_eager:g}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            logging.getLogger("torch._inductor.package.package").setLevel(logging.ERROR)
            compiled = torch._inductor.aoti_load_package(str(package_path))
    except RuntimeError as exc:
        # clip_pair's hi=inf is written as "Infinity", which torch's OSSProxyExecutor cannot read.
        print(f"  torch's own loader rejects the file it wrote: {str(exc).strip()}")
        print("    (torch defect, docs/torch-defects.md: a float argument of inf/NaN is written as \"Infinity\" "
              "and then fails to load)")
        vs_torch = 0.0
    else:
        vs_torch = max_diff(got, flat(compiled(x, y)))
        print(f"  externspec executor vs torch's compiled model: max |diff| = {vs_torch:g}")
    ok = vs_eager == 0.0 and vs_torch == 0.0
    print(f"  verdict: {'PASS' if ok else 'FAIL'}: torch's extern file, run by externspec with the wrapper's arrays, "
          f"{'matches' if ok else 'does NOT match'} eager bitwise")
    return ok


def main() -> int:
    print(f"externspec {es.__version__} (schema {es.SCHEMA_VERSION.major}.{es.SCHEMA_VERSION.minor}), "
          f"torch {torch.__version__}")
    with tempfile.TemporaryDirectory(prefix="externspec-demo-") as tmp:
        results = [part_a(Path(tmp)), part_b(Path(tmp)), part_c()]
    print(f"\ndemo: {'all parts passed' if all(results) else 'FAILED: ' + str(results)}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
