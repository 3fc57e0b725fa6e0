"""Conformance against torch's OpInfo corpus: capture the ATen calls of op_db samples, export each
call, round-trip its spec through JSON, replay it through an executor and compare with eager.

Reusable by any executor with the `call_function(index, int_args, tensor_args)` convention (the
C++ executor's tests pass their own factory).

Comparison: outputs and mutated inputs must have equal dtype, shape and values (bitwise; NaNs in
the same places). Random ops are replayed under the same seed, so they are compared bitwise too.
Ops that return uninitialized memory (`empty*`, `new_empty*`) are compared on dtype and shape only.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import externspec as es
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

UNINITIALIZED = re.compile(r"(^|::)(new_)?empty")


@dataclass
class Captured:
    op: torch._ops.OpOverload
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


class CaptureCalls(TorchDispatchMode):
    """Records every ATen call (with cloned tensor arguments, taken before the call mutates them)."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.calls: list[Captured] = []
        self.limit = limit

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if isinstance(func, torch._ops.OpOverload) and len(self.calls) < self.limit:
            snap = tree_map(lambda x: x.clone() if isinstance(x, torch.Tensor) else x, (args, kwargs))
            self.calls.append(Captured(func, *snap))
        return func(*args, **kwargs)


@dataclass
class Report:
    ops: int = 0
    calls: int = 0
    passed: int = 0
    unsupported: Counter[str] = field(default_factory=Counter)
    mismatches: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    eager_failed: int = 0

    @property
    def pass_rate(self) -> float:
        return self.passed / self.calls if self.calls else 0.0

    def lines(self) -> list[str]:
        out = [f"OpInfo conformance: {self.ops} OpInfos, {self.calls} captured ATen calls, "
               f"{self.passed} passed ({100 * self.pass_rate:.1f}%), {sum(self.unsupported.values())} unsupported, "
               f"{len(self.errors)} replay errors, {len(self.mismatches)} silent mismatches"]
        if nondeterministic:
            names = ", ".join(sorted(nondeterministic))
            out.append(f"  compared on dtype/shape only (eager differs from itself): {names}")
        for reason, n in self.unsupported.most_common():
            out.append(f"  unsupported x{n}: {reason}")
        out += [f"  ERROR {e}" for e in self.errors[:20]]
        out += [f"  MISMATCH {m}" for m in self.mismatches[:20]]
        return out


def unsupported_reason(exc: es.UnsupportedError) -> str:
    """Group add-time errors by cause: the type named in the message, plus the first words of why."""
    msg = str(exc)
    m = re.search(r"(argument|return) `[^`]*` of type `([^`]+)`: (.*)", msg)
    if m:
        why = m.group(3)
        why = "the ABI cannot carry it" if "cannot" in why else re.sub(r"\d+|'[^']*'|\[.*\]", "…", why)[:60]
        return f"{m.group(1)} type `{m.group(2)}`: {why}"
    if "fake-tensor run" in msg:
        return "list/optional/int return needs a fake-tensor run, which failed"
    return msg.split(": ", 1)[-1][:80]


def _same(a: Any, b: Any, values: bool) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.dtype != b.dtype or a.shape != b.shape or a.layout != b.layout:
            return False
        if not values or a.layout != torch.strided:
            return True
        if a.dtype == torch.complex32:  # few kernels exist for it; the upcast is exact
            a, b = a.to(torch.complex64), b.to(torch.complex64)
        if a.is_complex() or a.is_floating_point():
            both_nan = torch.isnan(a) & torch.isnan(b)
            return bool(((a == b) | both_nan).all())
        return bool(torch.equal(a, b))
    return a is None and b is None


def _flat_outputs(result: Any) -> list[Any]:
    out: list[Any] = []
    for r in result if isinstance(result, tuple) else (result,):
        if isinstance(r, (list, tuple)):
            out.extend(r)
        elif isinstance(r, torch.Tensor):
            out.append(r)
    return out


def _clone(x: Any) -> Any:
    return tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, x)


def check_call(call: Captured, make_executor: Callable[[es.ExternKernelNodes], Any], report: Report) -> None:
    """Export one captured call, round-trip the spec through JSON, replay it, compare with eager."""
    report.calls += 1
    label = f"{call.op.name()}"
    eager_args, eager_kwargs = _clone((call.args, call.kwargs))
    replay_args, replay_kwargs = _clone((call.args, call.kwargs))
    builder = es.SpecBuilder()
    try:
        site = builder.add(call.op, replay_args, replay_kwargs)
    except es.UnsupportedError as exc:
        report.unsupported[unsupported_reason(exc)] += 1
        return
    spec = es.loads(es.dumps(builder.build()), es.ExternKernelNodes)
    # The JSON text itself must be stable under a second round trip.
    assert json.loads(es.dumps(spec)) == json.loads(es.dumps(es.loads(es.dumps(spec), es.ExternKernelNodes)))
    torch.manual_seed(1234)
    try:
        want = _flat_outputs(call.op(*eager_args, **eager_kwargs))
    except Exception:
        report.eager_failed += 1
        report.calls -= 1
        return
    try:
        executor = make_executor(spec)
        slots = list(site.tensor_args)
        torch.manual_seed(1234)
        executor.call_function(site.index, site.int_args, slots)
    except Exception as exc:
        report.errors.append(f"{label}: {type(exc).__name__}: {str(exc)[:200]}")
        return
    got = slots[len(slots) - site.num_tensor_outputs:]
    values = not UNINITIALIZED.search(call.op.name()) and _eager_is_deterministic(call, want)
    ok = len(got) == len(want) and all(_same(g, w, values) for g, w in zip(got, want, strict=False))
    # Mutated inputs must match too (in-place and out= ops).
    before, _ = tree_flatten((eager_args, eager_kwargs))
    after, _ = tree_flatten((replay_args, replay_kwargs))
    ok = ok and all(_same(a, b, values) for a, b in zip(after, before, strict=True) if isinstance(a, torch.Tensor))
    if ok:
        report.passed += 1
    else:
        report.mismatches.append(f"{label} args={_describe(call.args)} kwargs={_describe(call.kwargs)}")


def _eager_is_deterministic(call: Captured, first: list[Any]) -> bool:
    """Run eager once more: kernels that leave part of an output uninitialized (e.g. _ctc_loss's
    log_alpha) differ from themselves, and are compared on dtype and shape only."""
    args, kwargs = _clone((call.args, call.kwargs))
    torch.manual_seed(1234)
    again = _flat_outputs(call.op(*args, **kwargs))
    same = len(again) == len(first) and all(_same(a, b, True) for a, b in zip(again, first, strict=False))
    if not same:
        nondeterministic.add(call.op.name())
    return same


nondeterministic: set[str] = set()  # op names whose eager outputs differ between two runs


def _describe(x: Any) -> str:
    return str(tree_map(lambda t: f"T{tuple(t.shape)}:{t.dtype}" if isinstance(t, torch.Tensor) else t, x))[:200]


def capture(opinfos: Iterable[Any], samples_per_op: int, calls_per_sample: int) -> tuple[int, list[Captured]]:
    """Run the first samples of each OpInfo (float32 when supported) and capture their ATen calls."""
    calls: list[Captured] = []
    n_ops = 0
    for info in opinfos:
        dtypes = info.supported_dtypes("cpu")
        dtype = next((d for d in (torch.float32, torch.int64, torch.bool) if d in dtypes), None)
        if dtype is None:
            continue
        n_ops += 1
        try:
            samples = list(info.sample_inputs("cpu", dtype, requires_grad=False))[:samples_per_op]
        except Exception:
            continue
        for sample in samples:
            mode = CaptureCalls(calls_per_sample)
            try:
                with mode:
                    info.op(sample.input, *sample.args, **sample.kwargs)
            except Exception:
                pass  # a sample that errors in eager still yields the calls made before the error
            calls.extend(mode.calls)
    return n_ops, calls


def run(opinfos: Iterable[Any], make_executor: Callable[[es.ExternKernelNodes], Any], *, samples_per_op: int = 1,
        calls_per_sample: int = 8) -> Report:
    n_ops, calls = capture(opinfos, samples_per_op, calls_per_sample)
    report = Report(ops=n_ops)
    for call in calls:
        check_call(call, make_executor, report)
    return report
