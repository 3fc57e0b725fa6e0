"""The cross-version matrix's packages (docs/torch-compat.md, "The cross-version matrix"): a few
small models that every supported torch compiles, kept as test data under tests/data/matrix/<release>/
with the eager inputs and outputs of the torch that compiled them, so every runtime runs the packages of
every supported torch without that torch installed.

Compiling the matrix's own cases imports torch alone (no externspec, no pytest), so any torch
environment can run it: `python -m tests.support.matrix compile` (from the repository root) compiles
every case of the running torch's release into tests/data/matrix/<its minor release>/;
`make matrix-data MATRIX_PYTHONS="..."` runs it under each given interpreter. Three cases are the tests'
own models, kept as torch 2.11 and 2.12 compiled them (KEPT below); compiling those imports
tests/support/zoo.py and aoti_models.py, which need externspec importable (`PYTHONPATH=python`, as
`make matrix-data` sets, and pydantic).
`python -m tests.support.matrix run` prints the running torch's row of the matrix: every package
through es.cpp.AOTIRunner, the Python executor and torch's own runner.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import re
import subprocess
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

# Register the custom ops of the packages: es_matrix::scale (the matrix's own), externspec_test::kwonly_fixed
# (the kept `kwonly` case's). Both modules import torch alone.
from tests.support import custom_ops, matrix_ops  # noqa: F401
from tests.support.paths import REPO

DATA = REPO / "tests" / "data" / "matrix"


class MlpOp(torch.nn.Module):
    """Two linear layers on a dynamic batch (in lite mode addmm, whose kwarg-only beta/alpha the nodes
    omit), and the custom op called with `p` only, on the same batch."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        mlp = torch.softmax(self.fc2(torch.relu(self.fc1(x))), dim=-1)
        return mlp, torch.ops.es_matrix.scale(x.relu(), 5) - x


def _int_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.add(a, b, alpha=3) + 1


class IntAdd(torch.nn.Module):
    """`add` with an int alpha on int64, then `+ 1` (an omitted alpha=1), as issue 34's table."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _int_add(a, b)


class Model(MlpOp):
    """Both, each part on its own inputs (default mode, where the int add is Inductor's own kernel)."""

    def forward(self, x: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:  # type: ignore[override]
        return (*super().forward(x), _int_add(a, b))


def _inputs(batch: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(batch)
    return (torch.randn(batch, 8, generator=g), torch.randint(-50, 50, (3, 5), generator=g),
            torch.randint(-50, 50, (3, 5), generator=g))


def _batch(batch: int) -> tuple[torch.Tensor, ...]:
    return _inputs(batch)[:1]


def _ints(batch: int) -> tuple[torch.Tensor, ...]:
    return _inputs(batch)[1:]


class GridSample3d(torch.nn.Module):
    """aten::grid_sampler_3d, which Inductor does not lower: torch 2.13 and later call their C shim's
    aoti_torch_cpu_grid_sampler_3d (first exported by 2.13's libtorch), 2.11 and 2.12 the proxy executor."""

    def forward(self, x: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.grid_sample(x, grid, align_corners=False)


def _volume(batch: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(batch)
    return torch.randn(batch, 2, 3, 4, 5, generator=g), torch.rand(batch, 2, 3, 4, 3, generator=g) * 2 - 1


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[], torch.nn.Module]
    make_inputs: Callable[[int], tuple[torch.Tensor, ...]]  # from a batch size
    lite: bool = False
    batches: tuple[int, ...] = (4, 9)  # the first is compiled at
    dynamic_shapes: Any = None  # torch.export dynamic_shapes; None: static
    releases: tuple[str, ...] | None = None  # the releases whose packages of it are kept; None: every one

    def module(self) -> torch.nn.Module:
        torch.manual_seed(0)
        return self.make().eval()

    def inputs(self) -> list[tuple[torch.Tensor, ...]]:
        return [self.make_inputs(n) for n in self.batches]


_BATCH = {0: torch.export.Dim("batch", min=2, max=64)}

# Default mode (Inductor's own kernels, the custom op through the proxy executor), lite mode (every op
# without a C shim through the proxy executor as well: the MLP and the custom op; the int add alone,
# which fails in the code torch 2.11 to 2.14 generate for it), and a C-shim function newer than 2.11.
CASES = {c.name: c for c in [
    Case("default", Model, _inputs, dynamic_shapes=(_BATCH, None, None)),
    Case("lite", MlpOp, _batch, lite=True, dynamic_shapes=(_BATCH,)),
    Case("int_add_lite", IntAdd, _ints, lite=True, batches=(4,)),
    Case("shim", GridSample3d, _volume, batches=(1,)),
]}


# The releases older than any environment `make setup` makes, whose packages of the tests' own models
# tests/torch/test_torch_releases.py runs (their models run on after a failed extern call).
OLDER_RELEASES = ("2.11", "2.12")


def _zoo(name: str) -> Any:
    from tests.support import zoo  # imports externspec: only the kept cases need it

    return zoo.ZOO[name]


def _kwonly_fixed() -> torch.nn.Module:
    from tests.support import aoti_models  # imports externspec: only the kept cases need it

    return aoti_models.KwOnlyFixed()


def _kwonly_inputs(batch: int) -> tuple[torch.Tensor, ...]:
    from tests.support import aoti_models

    return aoti_models.example_inputs()


# Kept: the lite-mode MLP (a dynamic batch, addmm nodes that omit the kwarg-only beta/alpha) and
# topk/sort/gather/index_select (an `index_select` extern call an out-of-range index makes fail) of
# tests/support/zoo.py, and a custom op tagged needs_fixed_stride_order whose kwarg-only defaults the
# node omits (default mode, tests/support/aoti_models.py), as torch 2.11 and 2.12 compiled them. A zoo
# model's input variants 0 and 1 are its batches 4 and 7.
KEPT = {c.name: c for c in [
    Case("lite_mlp", lambda: _zoo("mlp").make(), lambda n: _zoo("mlp").inputs((4, 7).index(n)), lite=True,
         batches=(4, 7), dynamic_shapes=(_BATCH,), releases=OLDER_RELEASES),
    Case("lite_index_sort", lambda: _zoo("index_sort").make(), lambda n: _zoo("index_sort").inputs(0), lite=True,
         batches=(4,), releases=OLDER_RELEASES),
    Case("kwonly", _kwonly_fixed, _kwonly_inputs, batches=(3,), releases=OLDER_RELEASES),
]}
CASES.update(KEPT)


def kept_by(case: Case, release: str) -> bool:
    """Whether the test data holds `case` compiled by torch `release`."""
    return case.releases is None or release in case.releases


def release(version: str = torch.__version__) -> str:
    """'2.13' for '2.13.0+cpu'."""
    return ".".join(version.split("+")[0].split(".")[:2])


def compile_case(case: Case, path: Path) -> None:
    """Compile `case` with the running torch into the package `path`, and record its eager inputs and
    outputs beside it (`<name>.eager.pt`: {"inputs": [per variant], "outputs": [per variant]})."""
    module = case.module()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore", FutureWarning)  # torch's own, from inside export/compile
        inputs = case.inputs()
        ep = torch.export.export(module, inputs[0], dynamic_shapes=case.dynamic_shapes)
        options = dict(torch._inductor.lite_mode_options) if case.lite else {}
        options.update(baseline_isa_options())
        if hasattr(torch._inductor.config.aot_inductor, "enable_line_tables"):
            # 2.12 and later compile the model library with -g1 by default: its line tables are two
            # thirds of a package's bytes, and nothing reads them here.
            options["aot_inductor.enable_line_tables"] = False
        with tempfile.TemporaryDirectory(dir=path.parent) as tmp, baseline_isa():
            # The archive's top folder is named after the package file, so it is compiled under its name.
            torch._inductor.aoti_compile_and_package(ep, package_path=str(Path(tmp) / path.name),
                                                     inductor_configs=options)
            record_eager(case, path)
            deflate(Path(tmp) / path.name, path)


# The instructions the stored packages may use (issue 54 item 2): every x86-64 machine that runs the
# tests has AVX2 and FMA (x86-64-v3), not every one AVX-512, and a library compiled for an ISA its CPU
# lacks dies with SIGILL. torch compiles for the machine that compiles: its vector ISA from the CPU
# (capped by ATEN_CPU_CAPABILITY, which it records as the package's AOTI_CPU_ISA) and `-march=native`
# for the rest of the code (Inductor's `cpp.march` option, TORCHINDUCTOR_CPP_MARCH, replaces it from 2.13). Both are
# set down here; tests/torch/test_matrix_isa.py holds every stored library to AVX2 by its instructions.
BASELINE_CAPABILITY = "avx2"
BASELINE_MARCH = "x86-64-v3"


def baseline_isa_options() -> dict[str, Any]:
    """Inductor options that compile for the baseline ISA, with its caches off (a cached kernel of
    the native ISA must not be reused); `baseline_isa` does the rest."""
    options: dict[str, Any] = {"force_disable_caches": True}
    if hasattr(torch._inductor.config.cpp, "march"):  # 2.13 and later
        options["cpp.march"] = BASELINE_MARCH
    return options


@contextlib.contextmanager
def baseline_isa() -> Iterator[None]:
    """While inside: ATEN_CPU_CAPABILITY at the baseline (Inductor picks its vector ISA from it at each
    compile) and, under a torch without Inductor's `cpp.march` option (2.11, 2.12, which pass `-march=native`
    always), the compiler's `-march=native` replaced by the baseline's."""
    from torch._inductor import cpp_builder

    old = os.environ.get("ATEN_CPU_CAPABILITY")
    os.environ["ATEN_CPU_CAPABILITY"] = BASELINE_CAPABILITY
    flags = cpp_builder._get_optimization_cflags

    def baseline_flags(*args: Any, **kwargs: Any) -> tuple[list[str], list[str]]:
        cflags, ldflags = flags(*args, **kwargs)
        return [f"march={BASELINE_MARCH}" if f == "march=native" else f for f in cflags], ldflags

    cpp_builder._get_optimization_cflags = baseline_flags
    try:
        yield
    finally:
        cpp_builder._get_optimization_cflags = flags
        if old is None:
            del os.environ["ATEN_CPU_CAPABILITY"]
        else:
            os.environ["ATEN_CPU_CAPABILITY"] = old


def record_eager(case: Case, path: Path) -> None:
    """The running torch's eager inputs and outputs of `case`, recorded beside its package `path`."""
    module = case.module()
    with torch.no_grad():
        inputs = case.inputs()
        torch.save({"inputs": inputs, "outputs": [module(*x) for x in inputs]}, eager_path(path))


def deflate(package: Path, out: Path) -> None:
    """`package` written to `out` with its members deflated, in the same order, byte for byte the same:
    torch stores them (a package is mostly its model library), and stored, the test data of five
    releases would be 7 MB instead of 2. torch's loader and externspec's read both."""
    with zipfile.ZipFile(package) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            member = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            dst.writestr(member, src.read(info), compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)


def eager_path(package: Path) -> Path:
    return package.with_name(package.name.removesuffix(".pt2") + ".eager.pt")


def package(release: str, name: str) -> Path:
    """The package of case `name` that torch `release` compiled, in the test data."""
    return DATA / release / f"{name}.pt2"


def recorded(package: Path) -> dict[str, list[Any]]:
    """The eager record beside `package`: {"inputs": [per variant], "outputs": [per variant]}."""
    return torch.load(eager_path(package))


def packages() -> list[tuple[str, str, Path]]:
    """(compiling release, case, package) of every package in the test data, oldest release first."""
    releases = sorted((d.name for d in DATA.iterdir() if d.is_dir()), key=release_key)
    return [(r, name, package(r, name)) for r in releases for name, case in CASES.items() if kept_by(case, r)]


# How a package is run: externspec's runner with its C++ executor, the same runner calling the Python
# executor (es.ProxyExecutor) for every extern call, and torch's own runner.
ROUTES = ("es.cpp", "python", "torch")


def _runner(package: Path, route: str) -> Callable[[tuple[torch.Tensor, ...]], Any]:
    if route == "torch":
        model = torch._inductor.aoti_load_package(str(package))
        return lambda x: model(*x)
    import externspec as es

    runner = es.cpp.AOTIRunner(package)
    if route == "es.cpp":
        return lambda x: runner(*x)
    with zipfile.ZipFile(package) as z:
        specs = [z.read(n) for n in z.namelist() if n.endswith(".wrapper.json")]
    # A package without extern calls has no extern-kernel file (the model never calls the executor).
    nodes = es.loads(specs[0], es.ExternKernelNodes) if specs else es.ExternKernelNodes(nodes=[])
    return lambda x: runner.run_flat_with(es.ProxyExecutor(nodes).call_function, list(x))


def run(package: Path, route: str) -> None:
    """Run `package` through `route` on every recorded input; raises when it cannot load or run, or
    when an output differs from the recorded eager output (AssertionError)."""
    record = recorded(package)
    call = _runner(package, route)
    for inputs, want in zip(record["inputs"], record["outputs"], strict=True):
        got = call(inputs)
        want = list(want) if isinstance(want, (tuple, list)) else [want]
        got = list(got) if isinstance(got, (tuple, list)) else [got]
        assert len(got) == len(want), f"{len(got)} outputs, eager {len(want)}"
        for g, w in zip(got, want, strict=True):
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)  # shape and dtype too


# Cells that fail, by the error the runner raises (a name in externspec) and why. The tests mark them
# strict xfail, so the change that makes one pass must remove it here.
FLOAT_ALPHA = ("ModelError", "torch 2.11 to 2.14 pass int64 add's alpha to the C shim's aoti_torch_cpu_add_Tensor "
               "as a double, which ATen refuses: the model fails in its own code, under every runner")
KNOWN_FAILING = {(r, "int_add_lite"): FLOAT_ALPHA for r in ("2.11", "2.12", "2.13", "2.14")}

RELEASE_NAMES = REPO / "python" / "externspec" / "cpp" / "csrc" / "aoti_runner" / "torch_releases.inc"


def release_key(release: str) -> tuple[int, int]:
    major, minor = release.split(".")
    return int(major), int(minor)


def release_names(kind: str) -> dict[str, str]:
    """torch_releases.inc, the runner's table: name -> the release that added it, for `kind` "kImport"
    (C-shim functions a model library may import) or "kExport" (its C entry points)."""
    rows = re.findall(r'^\{"(\d+\.\d+)", (kImport|kExport), "(\w+)"\},$', RELEASE_NAMES.read_text(), re.M)
    return {name: since for since, k, name in rows if k == kind}


def libtorch() -> ctypes.CDLL:
    """This torch's libtorch.so; a lookup in it also searches what it links (libtorch_cpu, libtorch_cuda)."""
    return ctypes.CDLL(str(Path(torch.__file__).parent / "lib" / "libtorch.so"))


def _dynamic_symbols(package: Path, defined: bool) -> list[str]:
    """The names the package's model library imports (`defined` False: undefined, not weak) or exports,
    by nm: apart from the runner's own ELF reading."""
    with zipfile.ZipFile(package) as z, tempfile.TemporaryDirectory() as tmp:
        (member,) = [n for n in z.namelist() if n.endswith(".wrapper.so")]
        library = Path(tmp) / "model.so"
        library.write_bytes(z.read(member))
        out = subprocess.run(["nm", "-D", "--defined-only" if defined else "--undefined-only", str(library)],
                             capture_output=True, text=True, check=True).stdout
    rows = [line.split() for line in out.splitlines()]
    return [r[-1] for r in rows if defined or r[0] == "U"]


def missing_shim_functions(package: Path) -> list[str]:
    """The C-shim functions the package's model library imports that this libtorch lacks (nm, then
    dlsym through ctypes)."""
    lib = libtorch()
    return sorted(n for n in _dynamic_symbols(package, False) if n.startswith("aoti_torch_") and not hasattr(lib, n))


def dated_release(package: Path) -> str:
    """The newest release whose names (the table's) the package's model library imports or exports:
    the oldest torch that can have compiled it ("2.11" when it has none of them)."""
    dated = [release_names("kImport").get(n) for n in _dynamic_symbols(package, False)]
    dated += [release_names("kExport").get(n) for n in _dynamic_symbols(package, True)]
    return max((r for r in dated if r), key=release_key, default="2.11")


def check(writer: str, package: Path, route: str) -> str:
    """The matrix's rule for one cell: the package compiled by torch `writer` runs through `route` equal
    to eager, unless its model library calls C-shim functions this libtorch lacks: then the runner
    refuses it at load with a PackageError naming the release that compiled it (as its names date it),
    this one, and each missing function with its release. Returns which of the two it was; raises
    AssertionError, or the runner's error, when neither."""
    import externspec as es

    missing = missing_shim_functions(package)
    if not missing:
        run(package, route)
        return "equal to eager"
    table = release_names("kImport")
    compiled = dated_release(package)
    assert release_key(compiled) <= release_key(writer), (compiled, writer)  # the table dates no name late
    try:
        run(package, route)
    except es.PackageError as exc:
        message = str(exc)
    else:
        raise AssertionError(f"{package} loaded, but this torch lacks {', '.join(missing)}")
    assert f"compiled by torch {compiled} or later, and this is torch {release()}" in message, message
    assert all(f"{f} (torch {table[f]})" in message for f in missing), message
    return f"refused at load: compiled by torch {compiled} or later, this is torch {release()}"


def outcome(package: Path, route: str) -> str:
    """'equal', or the failure as `Type: first line`, for the table in docs/torch-compat.md."""
    try:
        run(package, route)
    except Exception as exc:  # every failure is a cell of the table
        first = " ".join(str(exc).split())
        return f"{type(exc).__name__}: {first[:160]}"
    return "equal"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.support.matrix", description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=["compile", "run"],
                   help="compile: this torch's packages into the test data; run: this torch's row of the matrix")
    p.add_argument("--cases", help=f"comma-separated (default: those of {', '.join(CASES)} kept for the release)")
    p.add_argument("--out", type=Path, default=DATA, help="the folder holding one folder per torch release")
    args = p.parse_args(argv)
    names = args.cases.split(",") if args.cases else [n for n, c in CASES.items() if kept_by(c, release())]
    if args.command == "run":
        print(f"run by torch {torch.__version__}")
        for writer, name, path in packages():
            if args.cases is None or name in names:
                cells = "; ".join(f"{route}: {outcome(path, route)}" for route in ROUTES)
                print(f"compiled by {writer}, {name}: {cells}", flush=True)
        return 0
    out = args.out / release()
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        compile_case(CASES[name], out / f"{name}.pt2")
        print(f"{out / name}.pt2: {(out / f'{name}.pt2').stat().st_size} bytes", flush=True)
    (out / "torch.json").write_text(json.dumps({"torch": torch.__version__}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
