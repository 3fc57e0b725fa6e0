"""Op-schema evolution between export and load.

A spec is exported against version 1 of a torch.library op; the op is then redefined (library
destroyed and defined again, one namespace per test) and the spec loaded against version 2.
Compatible changes run with the new defaults; incompatible ones are load-time errors that name the
node, the argument and both types, where torch 2.13 passes None or drops values silently.

Every incompatible case runs twice: with the export-time schema recorded in the node (externspec's
default) and without it (as a torch-written file would be), to show that name-based validation
alone already refuses them. Each test runs over both executors (the `executor` fixture).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch

import externspec as es
from tests.support.executors import Executor, diverges

X = torch.arange(6.0).reshape(2, 3)
_ids = itertools.count()


class Evolving:
    """One op in a fresh namespace, redefinable."""

    def __init__(self) -> None:
        self.ns = f"externspec_evo_{next(_ids)}"
        self.lib: torch.library.Library | None = None

    def define(self, schema: str, impl: Callable[..., Any]) -> torch._ops.OpOverload:
        if self.lib is not None:
            self.lib._destroy()
        self.lib = torch.library.Library(self.ns, "DEF")
        self.lib.define(schema)
        self.lib.impl(schema.split("(")[0], impl, "CompositeExplicitAutograd")
        return getattr(getattr(torch.ops, self.ns), schema.split("(")[0]).default

    def close(self) -> None:
        if self.lib is not None:
            self.lib._destroy()


@pytest.fixture
def evolving() -> Iterator[Evolving]:
    e = Evolving()
    yield e
    e.close()


def export(op: torch._ops.OpOverload, args: tuple, kwargs: dict | None = None, *, record: bool = True,
           omit_defaults: bool = False) -> tuple[es.ExternKernelNodes, es.CallSite]:
    b = es.SpecBuilder(record_op_schema=record, omit_defaults=omit_defaults)
    site = b.add(op, args, kwargs)
    return es.loads(es.dumps(b.build()), es.ExternKernelNodes), site


def run(executor: Executor, spec: es.ExternKernelNodes, site: es.CallSite) -> torch.Tensor:
    slots = list(site.tensor_args)
    executor(spec).call_function(site.index, site.int_args, slots)
    return slots[-1]


V1 = "f(Tensor x, float alpha=1.0, int[] dims=[], str mode='sum') -> Tensor"


def v1(x, alpha=1.0, dims=(), mode="sum"):
    return x * alpha + sum(dims) + len(mode)


@pytest.mark.parametrize(("v2", "impl"), [
    ("f(Tensor x, float alpha=1.0, int[] dims=[], str mode='sum', int extra=7) -> Tensor",
     lambda x, alpha=1.0, dims=(), mode="sum", extra=7: v1(x, alpha, dims, mode) + 1000 * extra),
    ("f(Tensor x, int extra=7, float alpha=1.0, int[] dims=[], str mode='sum') -> Tensor",
     lambda x, extra=7, alpha=1.0, dims=(), mode="sum": v1(x, alpha, dims, mode) + 1000 * extra),
    ("f(Tensor x, float alpha=1.0, int[] dims=[], str mode='sum', *, Tensor? extra=None, int k=7) -> Tensor",
     lambda x, alpha=1.0, dims=(), mode="sum", *, extra=None, k=7: v1(x, alpha, dims, mode) + 1000 * k),
], ids=["trailing", "middle", "kwarg-only"])
@pytest.mark.parametrize("omit_defaults", [False, True], ids=["write-all", "omit-defaults"])
def test_new_argument_with_default_runs_with_the_default(evolving, v2, impl, omit_defaults, executor: Executor) -> None:
    spec, site = export(evolving.define(V1, v1), (X, 2.5, [1, 2], "mean"), omit_defaults=omit_defaults)
    op2 = evolving.define(v2, impl)
    got = run(executor, spec, site)
    assert torch.equal(got, op2(X, alpha=2.5, dims=[1, 2], mode="mean"))
    assert torch.equal(got, v1(X, 2.5, [1, 2], "mean") + 7000)


@pytest.mark.parametrize("record", [True, False], ids=["recorded", "torch-style"])
@pytest.mark.parametrize(("v2", "message"), [
    ("f(Tensor x, int extra, float alpha=1.0, int[] dims=[], str mode='sum') -> Tensor",
     "argument `extra` of type `int` has no default in the runtime op schema and the spec does not give it"),
    ("f(Tensor x, float alpha=1.0, int[] dims=[]) -> Tensor",
     "argument `mode` (as_string){was} is not in the runtime op schema"),
    ("f(Tensor x, float alpha=1.0, str mode='sum') -> Tensor",
     "argument `dims` (as_ints){was} is not in the runtime op schema"),
    ("f(Tensor x, int alpha=1, int[] dims=[], str mode='sum') -> Tensor",
     "argument `alpha` is `as_float` in the spec ({export}runtime type `int` accepts as_int)"),
    ("f(Tensor x, float alpha=1.0, float[] dims=[], str mode='sum') -> Tensor",
     "argument `dims` is `as_ints` in the spec ({export}runtime type `float[]` accepts as_floats)"),
    ("f(Tensor x, float alpha=1.0, int[] dims=[], str mode='sum') -> (Tensor, Tensor)",
     "{returns}"),
    ("f(Tensor x, float alpha=1.0, int[] dims=[], str mode='sum') -> Tensor[]",
     "{returns_list}"),
    ("f(Tensor x, int[] dims=[], float alpha=1.0, str mode='sum') -> Tensor",
     "argument `dims` comes after `alpha` in the spec but before it in the op schema"),
], ids=["new-required", "removed-static", "removed-dynamic", "retyped", "retyped-list", "more-returns",
        "list-return", "reordered"])
def test_incompatible_change_is_a_load_error(evolving, record, v2, message, executor: Executor) -> None:
    spec, _ = export(evolving.define(V1, v1), (X, 2.5, [1, 2], "mean"), record=record)
    evolving.define(v2, lambda *a, **k: X)
    removed = message.split("`")[1] if "`" in message else ""
    was = {"mode": " (type `str` at export)", "dims": " (type `int[]` at export)"}.get(removed, "") if record else ""
    export_type = {"alpha": "type `float` at export, ", "dims": "type `int[]` at export, "}
    returns = ("the op's returns changed since export: (Tensor) at export, (Tensor, Tensor) now" if record else
               "the spec has 1 outputs (as_tensor) but the runtime op returns (Tensor, Tensor)")
    returns_list = ("the op's returns changed since export: (Tensor) at export, (Tensor[]) now" if record else
                    "output 0 is `as_tensor` in the spec, but runtime return type `Tensor[]` is `as_tensors`")
    expected = message.format(was=was, export=export_type.get(removed, "") if record else "", returns=returns,
                              returns_list=returns_list)
    with pytest.raises(es.SpecMismatchError) as info:
        executor(spec)
    assert str(info.value).startswith(f"node 0 `buf0` ({evolving.ns}::f): ")
    assert expected in str(info.value)


def test_compatible_retype_int_to_symint_and_scalar(evolving, executor: Executor) -> None:
    op = evolving.define("f(Tensor x, int n, int[] sizes) -> Tensor", lambda x, n, sizes: x * n + sum(sizes))
    spec, site = export(op, (X, 3, [1, 2]))
    evolving.define("f(Tensor x, Scalar n, SymInt[] sizes) -> Tensor", lambda x, n, sizes: x * n + sum(sizes))
    assert torch.equal(run(executor, spec, site), X * 3 + 3)


def test_changed_default_of_an_omitted_argument_is_refused(evolving, executor: Executor) -> None:
    spec, _ = export(evolving.define(V1, v1), (X,), omit_defaults=True)
    assert [i.name for i in spec.nodes[0].node.inputs] == ["x"]
    evolving.define("f(Tensor x, float alpha=2.0, int[] dims=[], str mode='sum') -> Tensor", v1)
    before, now = ("1.0", "2.0") if executor.kind == "python" else ("1.", "2.")
    assert executor.kind == "python" or diverges("default_spelling")
    with pytest.raises(es.SpecMismatchError) as info:
        executor(spec)
    assert (f"argument `alpha` was omitted as equal to its default `{before}` (type `float`) at export, but the "
            f"runtime default is `{now}`") in str(info.value)


def test_written_defaults_survive_a_changed_default(evolving, executor: Executor) -> None:
    spec, site = export(evolving.define(V1, v1), (X,))
    evolving.define("f(Tensor x, float alpha=2.0, int[] dims=[], str mode='sum') -> Tensor", v1)
    assert torch.equal(run(executor, spec, site), v1(X, 1.0))  # the value at export, not the new default


def test_unregistered_op_is_a_load_error(evolving, executor: Executor) -> None:
    spec, _ = export(evolving.define(V1, v1), (X,))
    evolving.close()
    evolving.lib = None
    with pytest.raises(es.SpecMismatchError, match=f"no op `{evolving.ns}::f` is registered"):
        executor(spec)
