"""Packages that hold torchbind objects, compiled by AOTInductor from the torchbind cases of torch's
own tests (test/inductor/test_torchbind.py, test/inductor/test_aot_inductor.py) over torch's test
classes (`torch.classes._TorchScriptTesting`, torch/lib/libtorchbind_test.so, with the fake classes
of torch/testing/_internal/torchbind_impls.py for tracing).

torch writes each object the graph holds into the package (`data/constants/custom_obj_<i>`, a
TorchScript pickle) and lists them in `data/aotinductor/model/custom_objs_config.json`; its extern
calls name them (`as_custom_obj`), as arguments of custom ops and as the object of `call_torchbind`
method calls. Compiled once each, cached (artifacts._cached, keyed by this file and torch's version).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from torch._higher_order_ops.torchbind import enable_torchbind_tracing
from torch.testing._internal.torchbind_impls import _empty_tensor_queue, init_torchbind_implementations

from .artifacts import _cached

LIBRARY = Path(torch.__file__).parent / "lib" / "libtorchbind_test.so"


class FooOps(torch.nn.Module):
    """test_torchbind.py's `get_exported_model`: a `_Foo` passed to custom ops (a tuple return, a
    tensor return) and one of its methods called (`call_torchbind`)."""

    def __init__(self) -> None:
        super().__init__()
        self.attr = torch.classes._TorchScriptTesting._Foo(10, 20)
        self.b = torch.randn(2, 3, generator=torch.Generator().manual_seed(0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.b
        a = torch.ops._TorchScriptTesting.takes_foo_tuple_return(self.attr, x)
        y = a[0] + a[1]
        b = torch.ops._TorchScriptTesting.takes_foo(self.attr, y)
        c = self.attr.add_tensor(x)
        return x + b + c


class FooListReturn(torch.nn.Module):
    """test_torchbind.py's `test_torchbind_list_return_aot_compile`."""

    def __init__(self) -> None:
        super().__init__()
        self.attr = torch.classes._TorchScriptTesting._Foo(10, 20)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = torch.ops._TorchScriptTesting.takes_foo_list_return(self.attr, x)
        y = a[0] + a[1] + a[2]
        b = torch.ops._TorchScriptTesting.takes_foo(self.attr, y)
        return x + b


class Queue(torch.nn.Module):
    """test_torchbind.py's `test_torchbind_queue`: methods with no return (`push`) and a tensor
    return (`pop`) on a stateful object; each run leaves the queue as it found it."""

    def __init__(self, tq: torch.ScriptObject) -> None:
        super().__init__()
        self.tq = tq

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.tq.push(x.cos())
        self.tq.push(x.sin())
        x_cos = self.tq.pop()
        x_sin = self.tq.pop()
        return x_sin, x_cos


@dataclass(frozen=True)
class TorchbindModel:
    name: str
    make: Callable[[], torch.nn.Module]
    inputs: Callable[[], tuple[torch.Tensor, ...]]


def _ones() -> tuple[torch.Tensor, ...]:
    return (torch.ones(2, 3),)


MODELS = {
    m.name: m
    for m in [
        TorchbindModel("foo_ops", FooOps, _ones),
        TorchbindModel("foo_list_return", FooListReturn, _ones),
        TorchbindModel("queue", lambda: Queue(_empty_tensor_queue()),
                       lambda: (torch.randn(3, 2, generator=torch.Generator().manual_seed(0)),)),
    ]
}


def load_classes() -> None:
    """Register torch's test classes and ops (libtorchbind_test.so) and their fakes."""
    init_torchbind_implementations()


def package(name: str) -> Path:
    """The package of MODELS[name] (compiled on first use, then cached)."""
    load_classes()
    model = MODELS[name]

    def build(path: Path) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # torch's own, from inside export
            with enable_torchbind_tracing():
                ep = torch.export.export(model.make(), model.inputs(), strict=False)
            torch._inductor.aoti_compile_and_package(ep, package_path=str(path))

    return _cached(f"torchbind_{name}.pt2", build, key_files=(Path(__file__),))
