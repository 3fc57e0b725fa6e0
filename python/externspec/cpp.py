"""`es.cpp`: externspec's C++ proxy executor and AOTInductor runner, from Python.

The C++ sources (python/externspec/csrc/) are built as a torch extension on first use, not on
import, so `import externspec` stays light. The build goes to `<cache>/cpp/<name>/`, where the name
carries a hash of the sources, the generated headers, the flags and the torch/Python versions: any
change builds afresh, and an unchanged tree imports the cached library without invoking a
compiler. `<cache>` is `$EXTERNSPEC_CACHE_DIR`, else `.cache/` in a source checkout, else
`~/.cache/externspec`.

* `ProxyExecutor(spec | path, custom_objects=None)` mirrors `es.ProxyExecutor`: same load-time
  validation, same `call_function(index, int_args, tensor_args)` convention, same error kinds.
* `AOTIRunner(package_path)` loads a package made by `torch._inductor.aoti_compile_and_package`
  (CPU) and runs it with externspec's executor as the proxy executor: `runner(*inputs)` returns
  what torch's `aoti_load_package(...)(*inputs)` returns.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import threading
import weakref
import zipfile
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from ._cache import cache_dir
from ._generated.models import ExternKernelNodes
from .cpp_include import get_include
from .errors import CallError, DecodeError, ExternSpecError, SpecMismatchError, UnsupportedError, VersionError
from .wire import dumps

_HERE = Path(__file__).resolve().parent
CSRC = _HERE / "csrc"
INCLUDE = Path(get_include())
_SOURCES = ("abi.cpp", "enums.cpp", "executor.cpp", "aoti_runner.cpp", "module.cpp")
# Lean headers (no <torch/extension.h>): ~3x faster to compile. -O2 as the wrapper code itself.
CFLAGS = ("-O2", "-fvisibility=hidden")

_lock = threading.Lock()
_module: ModuleType | None = None


def _source_hash(extra_cflags: Sequence[str]) -> str:
    h = hashlib.sha256()
    for path in sorted([*CSRC.glob("*.h"), *CSRC.glob("*.cpp"), *(INCLUDE / "externspec").rglob("*.h")]):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    h.update(repr((CFLAGS, tuple(extra_cflags), torch.__version__, sys.version_info[:3])).encode())
    return h.hexdigest()[:16]


def build(extra_cflags: Sequence[str] = (), extra_ldflags: Sequence[str] = (), verbose: bool = False) -> ModuleType:
    """Build (or load from the cache) the extension with extra compiler flags, e.g. ASan's."""
    from torch.utils import cpp_extension

    name = f"externspec_cpp_{_source_hash([*extra_cflags, *extra_ldflags])}"
    build_dir = cache_dir() / "cpp" / name
    library = build_dir / f"{name}.so"
    if not library.exists():
        build_dir.mkdir(parents=True, exist_ok=True)
        return cpp_extension.load(
            name=name,
            sources=[str(CSRC / s) for s in _SOURCES],
            extra_cflags=[*CFLAGS, *extra_cflags],
            extra_ldflags=list(extra_ldflags),
            extra_include_paths=[str(INCLUDE), str(CSRC)],
            build_directory=str(build_dir),
            verbose=verbose,
        )
    # Cached: import the library directly (no ninja run, no compiler check).
    spec = importlib.util.spec_from_file_location(name, library)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def extension() -> ModuleType:
    """The compiled extension, built on first use (thread-safe; cached across processes)."""
    global _module
    with _lock:
        if _module is None:
            flags = os.environ.get("EXTERNSPEC_CPP_CFLAGS", "").split()
            ldflags = os.environ.get("EXTERNSPEC_CPP_LDFLAGS", "").split()
            module = build(flags, ldflags)
            module._register_errors(DecodeError, VersionError, SpecMismatchError, CallError, UnsupportedError)
            _module = module
        return _module


def _spec_json(spec: ExternKernelNodes | str | os.PathLike[str]) -> tuple[str, str | None]:
    if isinstance(spec, ExternKernelNodes):
        return dumps(spec), None
    if isinstance(spec, (str, os.PathLike)):
        return Path(spec).read_text(encoding="utf-8"), os.fspath(spec)
    raise TypeError(f"expected ExternKernelNodes or a file path, got {type(spec).__name__}")


def _with_source(exc: DecodeError, source: str | None) -> DecodeError:
    return DecodeError(exc.errors(), source=source) if source else exc


class ProxyExecutor:
    """The C++ executor: `es.ProxyExecutor`'s interface and rules, calls through `callBoxed`.

    `custom_objects` maps the names a spec's `as_custom_obj` arguments use to torchbind objects
    (`torch.ScriptObject`); every name a node uses must be given at load."""

    def __init__(self, spec: ExternKernelNodes | str | os.PathLike[str],
                 custom_objects: dict[str, Any] | None = None):
        text, source = _spec_json(spec)
        try:
            self._impl = extension().ProxyExecutor(text, dict(custom_objects or {}))
        except DecodeError as exc:
            raise _with_source(exc, source) from None
        except VersionError as exc:
            raise (VersionError(f"{source}: {exc}") if source else exc) from None

    def __len__(self) -> int:
        return len(self._impl)

    def call_function(self, index: int, int_args: Sequence[int], tensor_args: list[Any]) -> None:
        """Run node `index`; store its output tensors into their slots of `tensor_args`."""
        self._impl.call_function(index, int_args, tensor_args)


_INPUT_VAR = re.compile(r"auto\s+(\w+)\s*=\s*std::move\(inputs\[(\d+)\]\);")
_INPUT_CHECK = re.compile(r"assert_size_stride\((\w+),\s*\{([^}]*)\},\s*\{[^}]*\},\s*\"input\"\)")
_SIZE = re.compile(r"-?\d+L?\Z")


def input_shapes_from_wrapper(cpp: str, num_inputs: int) -> list[list[int | None] | None]:
    """The input shapes a generated wrapper was compiled for, from its own (env-gated)
    `assert_size_stride(argN, {sizes}, {strides}, "input")` checks: literal sizes are fixed,
    symbols (`s17`) are dynamic. An input the wrapper does not assert on is left unchecked."""
    var_of = {int(i): v for v, i in _INPUT_VAR.findall(cpp)}
    sizes = {v: [t.strip() for t in text.split(",") if t.strip()] for v, text in _INPUT_CHECK.findall(cpp)}
    shapes: list[list[int | None] | None] = []
    for i in range(num_inputs):
        dims = sizes.get(var_of.get(i, ""))
        shapes.append(None if dims is None else [int(d.rstrip("L")) if _SIZE.match(d) else None for d in dims])
    return shapes


def _find_model(names: list[str], model_name: str, path: str | os.PathLike[str]) -> str:
    found = [n for n in names if n.endswith(".wrapper.so") and f"/data/aotinductor/{model_name}/" in n]
    if len(found) != 1:
        raise ExternSpecError(f"{path}: expected one */data/aotinductor/{model_name}/*.wrapper.so, found {found}")
    return found[0]


class AOTIRunner:
    """Runs an AOTInductor package (CPU) with externspec's executor as the proxy executor.

    The package is extracted to a private temporary directory that lives as long as the runner.
    Inputs are checked against the count the model takes and their shapes: `input_shapes` (one
    list per input, `None` for a dynamic dimension), by default read from the wrapper's own checks
    (which the compiled model runs only under AOTI_RUNTIME_CHECK_INPUTS=1)."""

    def __init__(self, package_path: str | os.PathLike[str], *, model_name: str = "model",
                 custom_objects: dict[str, Any] | None = None,
                 input_shapes: Sequence[Sequence[int | None]] | None = None):
        from torch.utils import _pytree as pytree

        with zipfile.ZipFile(package_path) as z:
            so_name = _find_model(z.namelist(), model_name, package_path)
            self._dir = tempfile.mkdtemp(prefix="externspec-aoti-")
            # Removed when the runner goes away (a loaded library's files may be unlinked).
            self._cleanup = weakref.finalize(self, shutil.rmtree, self._dir, ignore_errors=True)
            z.extractall(self._dir)
        library = Path(self._dir) / so_name
        spec_path = library.with_name(library.name.removesuffix(".so") + ".json")
        # A model without extern calls has no extern-kernel file: an empty, current-version spec.
        text = spec_path.read_text(encoding="utf-8") if spec_path.exists() else dumps(ExternKernelNodes(nodes=[]))
        if input_shapes is not None:
            shapes: list[list[int | None] | None] = [list(s) for s in input_shapes]
        else:
            cpp_path = library.with_suffix(".cpp")
            cpp = cpp_path.read_text(encoding="utf-8") if cpp_path.exists() else ""
            shapes = input_shapes_from_wrapper(cpp, len(_INPUT_VAR.findall(cpp))) if cpp else []
        try:
            self._impl = extension().AOTIRunner(str(library), text, dict(custom_objects or {}), shapes)
        except DecodeError as exc:
            raise _with_source(exc, f"{package_path}!{spec_path.name}") from None
        self._in_spec = pytree.treespec_loads(self._impl.in_spec)
        self._out_spec = pytree.treespec_loads(self._impl.out_spec)

    @property
    def num_inputs(self) -> int:
        return int(self._impl.num_inputs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Flatten the inputs as the compiled model's call spec says, run, unflatten the outputs
        (what torch's `aoti_load_package` runner returns)."""
        from torch.export._tree_utils import reorder_kwargs
        from torch.utils import _pytree as pytree

        flat = pytree.tree_flatten((args, reorder_kwargs(kwargs, self._in_spec)))[0]
        tensors = [x for x in flat if isinstance(x, torch.Tensor)]
        return pytree.tree_unflatten(self._impl(*tensors), self._out_spec)

    def run_flat(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """The flat call: input tensors in, output tensors out (no pytree)."""
        return list(self._impl(*inputs))

    def close(self) -> None:
        """Unload the model and remove its extracted files."""
        self._impl = None
        self._cleanup()
