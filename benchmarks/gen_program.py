"""Synthetic torch.export-style ExportedPrograms of any size, for benchmarks.

The mix mirrors what torch.export writes for real models: mostly tensor arguments, ints and int
lists, some floats, bools, dtypes, devices, symbolic sizes, optional-tensor lists, and every
997th node a higher-order op with two nested subgraphs. The result validates against both
externspec's models and torch's own schema dataclasses.
"""

from __future__ import annotations

import random
from typing import Any

OPS = [
    "torch.ops.aten.add.Tensor", "torch.ops.aten.mul.Tensor", "torch.ops.aten.linear.default",
    "torch.ops.aten.view.default", "torch.ops.aten.sum.dim_IntList", "torch.ops.aten.relu.default",
    "torch.ops.aten._to_copy.default", "torch.ops.aten.cat.default", "torch.ops.aten.index.Tensor",
    "torch.ops.aten.convolution.default",
]


def _sym(rng: random.Random, i: int) -> dict[str, Any]:
    if rng.random() < 0.2:
        return {"as_expr": {"expr_str": f"s{i % 7} + {rng.randint(1, 8)}",
                            "hint": {"as_int": rng.randint(2, 64)}}}
    return {"as_int": rng.randint(1, 512)}


def _tensor_meta(rng: random.Random, i: int) -> dict[str, Any]:
    rank = rng.randint(1, 4)
    return {
        "dtype": rng.choice([7, 7, 7, 5, 6, 13]),
        "sizes": [_sym(rng, i + k) for k in range(rank)],
        "requires_grad": False,
        "device": {"type": "cpu", "index": None},
        "strides": [{"as_int": rng.randint(1, 4096)} for _ in range(rank)],
        "storage_offset": {"as_int": 0},
        "layout": 7,
    }


def _argument(rng: random.Random, values: list[str], i: int) -> dict[str, Any]:
    pick = rng.random()
    if pick < 0.45:
        return {"as_tensor": {"name": rng.choice(values)}}
    if pick < 0.55:
        return {"as_int": rng.randint(-4, 1024)}
    if pick < 0.65:
        return {"as_ints": [rng.randint(0, 512) for _ in range(rng.randint(1, 4))]}
    if pick < 0.70:
        return {"as_float": round(rng.uniform(-2, 2), 6)}
    if pick < 0.74:
        return {"as_bool": rng.random() < 0.5}
    if pick < 0.78:
        return {"as_none": True}
    if pick < 0.81:
        return {"as_scalar_type": rng.choice([5, 7, 8])}
    if pick < 0.83:
        return {"as_device": {"type": "cpu", "index": None}}
    if pick < 0.88:
        return {"as_sym_ints": [{"as_name": f"sym_size_int_{i % 13}"}, {"as_int": rng.randint(1, 64)}]}
    if pick < 0.92:
        return {"as_tensors": [{"name": rng.choice(values)} for _ in range(rng.randint(2, 4))]}
    if pick < 0.95:
        return {"as_optional_tensors": [{"as_tensor": {"name": rng.choice(values)}}, {"as_none": True}]}
    if pick < 0.97:
        return {"as_string": rng.choice(["none", "tanh", "mean", "sum"])}
    if pick < 0.99:
        return {"as_memory_format": 1}
    return {"as_sym_int": {"as_name": f"sym_size_int_{i % 13}"}}


def _graph(rng: random.Random, num_nodes: int, prefix: str, depth: int) -> dict[str, Any]:
    values = [f"{prefix}arg{k}" for k in range(4)]
    tensor_values = {v: _tensor_meta(rng, k) for k, v in enumerate(values)}
    nodes = []
    for i in range(num_nodes):
        out = f"{prefix}v{i}"
        if depth == 0 and i % 997 == 996:
            inputs = [
                {"name": "pred", "arg": {"as_tensor": {"name": rng.choice(values)}}, "kind": 1},
                {"name": "true_fn", "arg": {"as_graph": {"name": f"true_graph_{i}",
                                                         "graph": _graph(rng, 5, f"t{i}_", depth + 1)}},
                 "kind": 1},
                {"name": "false_fn", "arg": {"as_graph": {"name": f"false_graph_{i}",
                                                          "graph": _graph(rng, 5, f"f{i}_", depth + 1)}},
                 "kind": 1},
                {"name": "operands", "arg": {"as_tensors": [{"name": rng.choice(values)}]}, "kind": 1},
            ]
            target = "torch.ops.higher_order.cond"
        else:
            inputs = [{"name": f"a{k}", "arg": _argument(rng, values, i), "kind": rng.choice([1, 1, 2])}
                      for k in range(rng.randint(2, 7))]
            target = rng.choice(OPS)
        nodes.append({
            "target": target,
            "inputs": inputs,
            "outputs": [{"as_tensor": {"name": out}}],
            "metadata": {"stack_trace": f'File "model.py", line {100 + i}, in forward',
                         "nn_module_stack": f"L__self__,,model.Block{i % 12}",
                         "torch_fn": f"op_{i};OpOverload.default"},
            "is_hop_single_tensor_return": None,
            "name": out,
        })
        tensor_values[out] = _tensor_meta(rng, i)
        values.append(out)
    return {
        "inputs": [{"as_tensor": {"name": v}} for v in values[:4]],
        "outputs": [{"as_tensor": {"name": values[-1]}}],
        "nodes": nodes,
        "tensor_values": tensor_values,
        "sym_int_values": {f"sym_size_int_{k}": {"as_expr": {"expr_str": f"s{k}", "hint": {"as_int": 8}}}
                           for k in range(13)},
        "sym_bool_values": {},
        "is_single_tensor_return": False,
        "custom_obj_values": {},
        "sym_float_values": {},
    }


def make_exported_program(num_nodes: int, seed: int = 0) -> dict[str, Any]:
    """A torch.export model.json document (as parsed JSON) with `num_nodes` top-level nodes."""
    rng = random.Random(seed)
    graph = _graph(rng, num_nodes, "", 0)
    inputs = [a["as_tensor"]["name"] for a in graph["inputs"]]
    return {
        "graph_module": {
            "graph": graph,
            "signature": {
                "input_specs": [{"user_input": {"arg": {"as_tensor": {"name": n}}}} for n in inputs],
                "output_specs": [{"user_output": {"arg": graph["outputs"][0]}}],
            },
            "module_call_graph": [{"fqn": "", "signature": None}],
            "metadata": {},
            "treespec_namedtuple_fields": {},
        },
        "opset_version": {"aten": 10},
        "range_constraints": {f"s{k}": {"min_val": 2, "max_val": None} for k in range(7)},
        "schema_version": {"major": 8, "minor": 20},
        "verifiers": [],
        "torch_version": "2.13.0",
        "guards_code": [],
    }
