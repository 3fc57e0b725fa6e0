"""`es.cpp`: externspec's C++ proxy executor and AOTInductor runner, from Python.

The C++ room: `csrc/` holds the sources (executor/, aoti_package/, aoti_runner/, python/: the
binding), `binding.py` finds or builds the compiled binding (the wheel's, else a first-use build
of this checkout with CMakeLists.txt), and this module wraps it in the Python API:

* `ProxyExecutor(spec | path | JSON text, custom_objects=None)` mirrors `es.ProxyExecutor`: same load-time
  validation, same `call_function(index, int_args, tensor_args)` convention, same error kinds.
* `AOTIRunner(package, **options)` loads a package made by `torch._inductor.aoti_compile_and_package`
  (a path, or its bytes; for the CPU, or for CUDA in a build with CUDA: docs/cuda.md) and runs it
  with externspec's executor as the proxy executor: `runner(*inputs)` returns what torch's
  `aoti_load_package(...)(*inputs)` returns; `runner.run(*inputs, stream=s)` runs on a given CUDA
  stream. Calls release the GIL and may come from many threads; `num_models=N` lets N of them run
  at once. The options are `AOTIRunnerOptions`' (the C++ struct, bound): every field by keyword.
* `package_members(package)`: a package's (a path or its bytes) members as the runner reads its zip
  directory, after the checks it makes before torch's reader opens it (`{name inside the top folder
  (bytes): (size, CRC-32)}`), or `PackageError`.
* `extension()`: the compiled binding itself (`build`, `prebuilt`: how it is obtained); `runtime_cmake_dir()`:
  the CMake package of the runtime library it links (for C++ that must link the same one).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

import torch
from torch.export._tree_utils import reorder_kwargs
from torch.utils import _pytree as pytree

from .._cache import cache_dir as cache_dir
from .._generated.models import CallLayout, ExternKernelNodes
from ..abi import op_policy
from ..abi.call_layout import call_layout_option
from ..errors import CallError, DecodeError, VersionError
from ..messages import message
from ..wire import dumps, model_or_document
from ..wire.limits import Limits
from .binding import build as build
from .binding import extension as extension
from .binding import prebuilt as prebuilt
from .binding import runtime_cmake_dir as runtime_cmake_dir


def _spec_json(spec: ExternKernelNodes | str | bytes | os.PathLike[str]) -> tuple[str | bytes, str | None]:
    # The size limit applies before reading a file; the C++ decoder checks the UTF-8 itself.
    given, source = model_or_document(spec, ExternKernelNodes)
    return (dumps(given) if isinstance(given, ExternKernelNodes) else given), source


def _with_source(exc: DecodeError, source: str | None) -> DecodeError:
    return DecodeError(exc.errors(), source=source, truncated=exc.truncated) if source else exc


def _cpp_limits(limits: Limits) -> Any:
    """`limits` as the binding's `externspec::Limits`."""
    out = extension().Limits()
    for name, value in vars(limits).items():
        setattr(out, name, value)
    return out


def _layout_name(option: CallLayout | str) -> str:
    """The `call_layout` option as the binding takes it (ValueError, as es.ProxyExecutor's, for a bad one)."""
    layout = call_layout_option(option)
    return "auto" if layout is None else layout.name


def _layout_of(name: str | None) -> CallLayout | None:
    return None if name is None else CallLayout[name]


# A package as the runner takes it: a path, or the package's bytes (read from memory, not written).
Package = str | os.PathLike[str] | bytes | bytearray | memoryview


def _package_arg(package: Package) -> str | bytes | bytearray | memoryview:
    return package if isinstance(package, (bytes, bytearray, memoryview)) else os.fspath(package)


def package_members(package: Package) -> dict[bytes, tuple[int, int]]:
    """The members of a package (a path or its bytes) as `AOTIRunner` reads its zip directory:
    `{name inside the top folder: (size, CRC-32)}` once every check the runner makes before torch's
    zip reader opens the file has passed (names, duplicates ignoring case, sizes, the one directory
    every zip reader sees; SECURITY.md), else `PackageError` naming what is wrong."""
    return dict(extension().package_members(_package_arg(package)))


def AOTIRunnerOptions(**options: Any) -> Any:
    """The runner's options (C++ `externspec::AOTIRunnerOptions`, one bound class holding every
    option and its default): `model_name`, `device`, `custom_objects`, `num_models`, `op_libraries`,
    `load_custom_objects`, `limits` (an `es.Limits`; unset: `es.Limits.current()` at the call),
    `require_input_records`, `call_layout`. TypeError names an unknown option."""
    return extension().AOTIRunnerOptions(**{"limits": Limits.current(), **options})


class ProxyExecutor:
    """The C++ executor: `es.ProxyExecutor`'s interface and rules, calls through `callBoxed`.

    `custom_objects` maps the names a spec's `as_custom_obj` arguments use to torchbind objects
    (`torch.ScriptObject`); every name a node uses must be given at load. `allow_ops` as for
    `es.ProxyExecutor`: denied ops this spec may use anyway. `device` as for `es.ProxyExecutor`:
    the runtime device every `as_device` argument passes (None: the serialized one). `call_layout`
    and `call_lengths` as for `es.ProxyExecutor`: where a torch-written file's omitted kwarg-only
    defaults are, and the wrapper's calls that decide it at load."""

    def __init__(self, spec: ExternKernelNodes | str | bytes | os.PathLike[str],
                 custom_objects: dict[str, Any] | None = None, allow_ops: Iterable[str] = (), *,
                 device: torch.device | str | None = None, call_layout: CallLayout | str = "auto",
                 call_lengths: Iterable[tuple[int, int, int]] | None = None):
        allowed = op_policy.check_allow_ops(allow_ops)
        if device is not None and not isinstance(device, (str, torch.device)):
            raise TypeError(f"device must be a str or torch.device, got {type(device).__name__}")
        layout = _layout_name(call_layout)
        lengths = None if call_lengths is None else [tuple(c) for c in call_lengths]
        text, source = _spec_json(spec)
        try:
            self._impl = extension().ProxyExecutor(text, dict(custom_objects or {}), list(allowed),
                                                   None if device is None else str(device), layout, lengths,
                                                   _cpp_limits(Limits.current()))
        except DecodeError as exc:
            raise _with_source(exc, source) from None
        except VersionError as exc:
            raise exc.with_source(source) from None

    def __len__(self) -> int:
        return len(self._impl)

    @property
    def call_layout(self) -> CallLayout | None:
        """As `es.ProxyExecutor.call_layout`: the layout of this spec's calls (None: undecided)."""
        return _layout_of(self._impl.call_layout)

    def call_function(self, index: int, int_args: Sequence[int], tensor_args: list[Any]) -> None:
        """Run node `index`; store its output tensors into their slots of `tensor_args`."""
        self._impl.call_function(index, int_args, tensor_args)


class AOTIRunner:
    """Runs an AOTInductor package with externspec's executor as the proxy executor: a thin
    binding over the C++ `externspec::AOTIRunner`, which opens the package itself.

    Loading checks every member name (nothing outside the package is read or written, no name
    twice), bounds every member by its recorded size and verifies its size and CRC-32 before use,
    extracts only the model's library and weight blob into a private directory (removed once the
    model is loaded on the CPU, and whenever loading fails); the same library loaded again is
    shared, not mapped again. Every call checks the inputs against what the package records
    (count, dtype, rank, sizes, dynamic ranges, sizes shared between inputs, strides, device,
    layout, data behind every element) and raises `CallError` naming the input; the model's own
    failure raises `ModelError` with its message (or ATen's, for a call of its own that failed); a
    bad package raises `PackageError`. A package that records no dtype or shape for an input (no
    `*.wrapper.cpp`) loads with a warning, or is refused with `require_input_records=True`.

    `package`: a path, or the package's bytes (`bytes`, or any buffer, which is copied first): read
    from memory with the same checks; only the model's library is written (the weights are read into
    memory), into the private directory (docs/aoti-packages.md, "Packages from memory").

    Options (keywords; `AOTIRunnerOptions`, the C++ struct's fields):

    * `model_name`: the model folder inside the package ("model").
    * `device`: "cpu", or "cuda" / "cuda:N" for a package compiled for CUDA in a build of es.cpp
      with CUDA (docs/cuda.md); a build without CUDA raises `UnsupportedError` for it.
    * `custom_objects`: torchbind objects by the names the extern calls use.

    * `num_models`: model instances in torch's container. Calls release the GIL and are safe from
      any number of threads; up to `num_models` of them run at once, the others wait for a free
      instance.
    * `op_libraries`: custom op libraries (`.so` paths) loaded before the package is planned, as
      `torch.ops.load_library` loads them, once per process; a path that is not a loadable library
      raises `PackageError`.
    * `load_custom_objects`: read the package's torchbind objects (`custom_objs_config.json`) and
      unpickle them with torch's loader, as torch's `aoti_load_package` does. Off by default:
      unpickling runs code of the objects' classes (SECURITY.md); without it a package whose
      extern calls use objects not given in `custom_objects` raises `PackageError` naming this
      option, before anything is unpickled.
    * `limits` (`es.Limits`, SECURITY.md): `max_json_bytes` (the extern-kernel file and each JSON
      member), `max_source_bytes` (the wrapper source), `max_extracted_bytes` (written to disk; 0: 16
      times the package's size), `max_custom_object_bytes`; unset, `es.Limits.current()`: the
      process defaults as they are at the call (`externspec.wire.MAX_JSON_BYTES` for the first).
    * `require_input_records`: refuse a package that records no dtype or shape for an input.
    * `call_layout`: where the extern-kernel file's omitted kwarg-only defaults are, as for
      `es.ProxyExecutor`; "auto" decides from the calls the package's `*.wrapper.cpp` states, at load
      (a call that matches no layout of its node raises `SpecMismatchError` naming it), and in a
      package without one at the first call that decides it (docs/torch-compat.md, "The call layout")."""

    def __init__(self, package: Package, **options: Any):
        self._path = "<package bytes>" if isinstance(package, (bytes, bytearray, memoryview)) else os.fspath(package)
        self._impl: Any = extension().AOTIRunner(_package_arg(package), AOTIRunnerOptions(**options))
        if type(self).run_flat is AOTIRunner.run_flat:  # see run_flat (a subclass's own stays)
            self.__dict__["run_flat"] = self._impl.run_flat
        self._in_spec = pytree.treespec_loads(self._runner.in_spec)
        self._out_spec = pytree.treespec_loads(self._runner.out_spec)

    @property
    def _runner(self) -> Any:
        if self._impl is None:
            raise CallError(message("RUNNER_CLOSED", label=self._path))
        return self._impl

    @property
    def num_inputs(self) -> int:
        return int(self._runner.num_inputs)

    @property
    def num_models(self) -> int:
        """How many calls may run at once (the model instances of torch's container)."""
        return int(self._runner.num_models)

    @property
    def call_layout(self) -> CallLayout | None:
        """The layout of the package's extern calls (None: undecided; `es.ProxyExecutor.call_layout`)."""
        return _layout_of(self._runner.call_layout)

    @property
    def device(self) -> torch.device:
        """The device the model runs on (a CUDA device with its index)."""
        return torch.device(self._runner.device)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Flatten the inputs as the compiled model's call spec says, run, unflatten the outputs
        (what torch's `aoti_load_package` runner returns)."""
        return self._run_tree(args, kwargs, None)

    def run(self, *args: Any, stream: Any = None, **kwargs: Any) -> Any:
        """`runner(*args, **kwargs)` on a given CUDA stream (a `torch.cuda.Stream` of the runner's
        device; None: the device's current stream): the model's kernels and its extern calls run on
        it, and the outputs are ready once that stream reaches this point."""
        return self._run_tree(args, kwargs, stream)

    def _run_tree(self, args: tuple[Any, ...], kwargs: dict[str, Any], stream: Any) -> Any:
        flat = pytree.tree_flatten((args, reorder_kwargs(kwargs, self._in_spec)))[0]
        tensors = [x for x in flat if isinstance(x, torch.Tensor)]
        return pytree.tree_unflatten(self.run_flat(tensors, stream=stream), self._out_spec)

    def run_flat(self, inputs: Sequence[torch.Tensor], *, stream: Any = None) -> list[torch.Tensor]:
        """The flat call: input tensors in, output tensors out (no pytree); `stream` as for `run`."""
        # An open runner never gets here: __init__ puts the binding's own `run_flat` on the
        # instance, so that the call's hot path has no Python frame (a frame costs about 0.3 us of
        # a 5 us run; benchmarks/bench_cpp_runner.py). This one answers a closed runner.
        return self._runner.run_flat(inputs, stream=stream)

    def run_flat_with(self, call_function: Any, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """`run_flat` with a Python proxy executor: the compiled wrapper calls
        `call_function(index, int_args, tensor_args)` (e.g. `es.ProxyExecutor(...).call_function`) with
        the arrays it passes, output slots as None, and reads back what it stores into them."""
        return list(self._runner.run_with_python(call_function, *inputs))

    def close(self) -> None:
        """Unload the model (and remove any files it still had): every later call raises CallError,
        also through a `run_flat` looked up before (`run = runner.run_flat`); calls in flight finish,
        and the model is released when the last of them ends."""
        self.__dict__.pop("run_flat", None)
        if self._impl is not None:
            self._impl.close()  # the binding's methods, wherever kept, find it closed
        self._impl = None
