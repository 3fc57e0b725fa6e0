"""The op calls the executor tests replay (tests/abi/test_replay.py through both executors,
tests/cpp/test_cpp_executor.py side by side, tests/abi/test_node_layout.py's layouts): custom ops
of every schema type (tests/support/custom_ops.py) and the aten ops whose arguments torch writes in
ways of their own, each as (id, op, args, kwargs)."""

from __future__ import annotations

from typing import Any

import torch

from tests.support import custom_ops as co

X = torch.arange(12.0).reshape(3, 4) / 7
Y = torch.arange(12.0).reshape(3, 4) * -0.5


def flat_tensors(result: Any) -> list[torch.Tensor]:
    out: list[torch.Tensor] = []
    for r in result if isinstance(result, tuple) else (result,):
        if isinstance(r, torch.Tensor):
            out.append(r)
        elif isinstance(r, list):
            out.extend(r)
    return out


CALLS = [
    ("all_inputs", co.all_inputs, *co.all_inputs_example(X, Y)),
    ("scalars_bool", co.scalars, (X, True, [True, False]), {"z": 2 + 3j}),
    ("scalars_int", co.scalars, (X, 7, [1, 2]), {}),
    ("floats_nonfinite", co.floats, (X, float("inf"), float("nan"), [float("-inf"), 1.0]), {}),
    ("kwonly_defaults", co.kwonly, (X,), {}),
    ("kwonly_given", co.kwonly, (X, 5), {"k": 7, "s": 11, "dtype": torch.float16, "mode": "b"}),
    ("enum_defaults", co.enum_defaults, (X,), {}),
    ("enum_given", co.enum_defaults, (X, torch.int32, torch.strided, torch.channels_last), {}),
    ("tuple_out", co.tuple_out, (X, Y), {}),
    ("list_out", co.list_out, (X, 3), {}),
    ("optional_some", co.optional_out, (X, True), {}),
    ("optional_none", co.optional_out, (X, False), {}),
    ("int_out", co.int_out, (X,), {}),
    ("mixed_out", co.mixed_out, (X, 2), {}),
    ("aten_add_wrapped", torch.ops.aten.add.Tensor, (X.to(torch.int32), 2.5), {}),
    ("aten_index_optional_list", torch.ops.aten.index.Tensor, (X, [None, torch.tensor([0, 2])]), {}),
    ("aten_split", torch.ops.aten.split.Tensor, (X, 2, 1), {}),
    ("aten_to_dtype", torch.ops.aten.to.dtype, (X, torch.float16), {}),
    ("aten_empty_like_fmt", torch.ops.aten.clone.default, (X.reshape(1, 3, 2, 2),),
     {"memory_format": torch.channels_last}),
]
