"""A realistic torch.export ExportedProgram of any size, for decode benchmarks.

`make_exported_program(num_nodes, seed)` returns the JSON dict of a program shaped like what
`torch.export.save` writes for an MLP-like model with a dynamic batch dimension: linear layers with
lifted parameters, pointwise ops, views, reductions, cat/split, `sym_size` + `full` with symbolic
sizes, `index.Tensor` with optional tensors, dtype conversions and, every few hundred nodes, a
`torch.cond` whose branches are nested `as_graph` subgraphs. Every tensor has its TensorMeta (with the
symbolic batch size), every node torch's metadata (stack trace, module stack, torch_fn). The node
inputs follow the real aten schemas, so torch's own deserializer accepts the program.

~10k nodes make ~10 MB of JSON.
"""

from __future__ import annotations

import json
import random
from typing import Any

WIDTH = 64
SYMBOL = "Symbol('s77', positive=True, integer=True)"
HINT = 8
FLOAT32, FLOAT16, INT64 = 7, 6, 5
STRIDED, CONTIGUOUS = 7, 1
CPU: dict[str, Any] = {"type": "cpu", "index": None}


def _t(name: str) -> dict[str, Any]:
    return {"as_tensor": {"name": name}}


def _meta(sizes: list[Any], dtype: int = FLOAT32, requires_grad: bool = False) -> dict[str, Any]:
    def sym(x: Any) -> dict[str, Any]:
        return {"as_int": x} if isinstance(x, int) else {"as_expr": {"expr_str": SYMBOL, "hint": {"as_int": HINT}}}

    # Row-major strides; only the leading (batch) dimension is symbolic, so strides are concrete.
    strides, step = [], 1
    for s in reversed(sizes):
        strides.append(step)
        step *= s if isinstance(s, int) else HINT
    strides.reverse()
    return {"dtype": dtype, "sizes": [sym(s) for s in sizes], "requires_grad": requires_grad, "device": CPU,
            "strides": [{"as_int": x} for x in strides],
            "storage_offset": {"as_int": 0}, "layout": STRIDED}


class _Builder:
    """Appends nodes to one graph, naming values the way torch.export does (op, op_1, op_2, ...)."""

    def __init__(self, rng: random.Random, line0: int):
        self.rng = rng
        self.nodes: list[dict[str, Any]] = []
        self.tensor_values: dict[str, Any] = {}
        self.sym_int_values: dict[str, Any] = {}
        self.counts: dict[str, int] = {}
        self.line = line0

    def fresh(self, base: str) -> str:
        n = self.counts.get(base, 0)
        self.counts[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    def node(self, target: str, inputs: list[tuple[str, dict[str, Any], int]], outputs: list[dict[str, Any]],
             name: str, module: str) -> None:
        self.line += 1
        fn = target.split(".")[-2]
        stack = (f'File "/models/mlp.py", line {self.line}, in forward\n    x = self.{module}(x)\n'
                 f'  File "/site-packages/torch/nn/modules/module.py", line 1784, in _call_impl\n'
                 f'    return forward_call(*args, **kwargs)')
        self.nodes.append({
            "target": target,
            "inputs": [{"name": n, "arg": a, "kind": k} for n, a, k in inputs],
            "outputs": outputs,
            "metadata": {"stack_trace": stack,
                         "nn_module_stack": f"L__self__,,models.mlp.MLP;L__self__{module},{module},torch.nn.Linear",
                         "torch_fn": f"{fn}_{self.counts.get(fn, 1)};method_descriptor.{fn}"},
            "is_hop_single_tensor_return": None,
            "name": name,
        })

    def unary(self, op: str, x: str, module: str, **extra: Any) -> str:
        out = self.fresh(op.split(".")[0])
        inputs = [("self", _t(x), 1)] + [(k, v, 2) for k, v in extra.items()]
        self.node(f"torch.ops.aten.{op}", inputs, [_t(out)], out, module)
        self.tensor_values[out] = _meta([SYMBOL, WIDTH])
        return out


# Each step appends one random operation on the current value `x` (shape [s77, WIDTH], float32) and
# returns the new current value; `_block` picks one by a uniform draw.


def _linear(b: _Builder, x: str, params: list[tuple[str, str]], module: str) -> str:
    w, bias = f"p_{module}_weight", f"p_{module}_bias"
    params.append((w, bias))
    b.tensor_values[w] = _meta([WIDTH, WIDTH], requires_grad=True)
    b.tensor_values[bias] = _meta([WIDTH], requires_grad=True)
    out = b.fresh("linear")
    b.node("torch.ops.aten.linear.default", [("input", _t(x), 1), ("weight", _t(w), 1), ("bias", _t(bias), 1)],
           [_t(out)], out, module)
    b.tensor_values[out] = _meta([SYMBOL, WIDTH])
    return out


def _pointwise(b: _Builder, x: str, params: list[tuple[str, str]], module: str) -> str:
    return b.unary(b.rng.choice(["relu.default", "sin.default", "cos.default", "neg.default"]), x, module)


def _gelu(b: _Builder, x: str, params: list[tuple[str, str]], module: str) -> str:
    return b.unary("gelu.default", x, module, approximate={"as_string": b.rng.choice(["tanh", "none"])})


def _add(b: _Builder, x: str, params: list[tuple[str, str]], module: str) -> str:
    out = b.fresh("add")
    other = {"as_float": round(b.rng.uniform(-2, 2), 3)} if b.rng.random() < 0.5 else _t(x)
    b.node("torch.ops.aten.add.Tensor", [("self", _t(x), 1), ("other", other, 1)], [_t(out)], out, module)
    b.tensor_values[out] = _meta([SYMBOL, WIDTH])
    return out


def _square(b: _Builder, x: str, params: list[tuple[str, str]], module: str) -> str:
    out = b.fresh("mul")
    b.node("torch.ops.aten.mul.Tensor", [("self", _t(x), 1), ("other", _t(x), 1)], [_t(out)], out, module)
    b.tensor_values[out] = _meta([SYMBOL, WIDTH])
    return out


def _view(b: _Builder, x: str, params: list[tuple[str, str]], module: str) -> str:
    out = b.fresh("view")
    b.node("torch.ops.aten.view.default", [("self", _t(x), 1), ("size", {"as_ints": [-1, WIDTH]}, 1)],
           [_t(out)], out, module)
    b.tensor_values[out] = _meta([SYMBOL, WIDTH])
    return out


def _minus_row_sum(b: _Builder, x: str, params: list[tuple[str, str]], module: str) -> str:
    s = b.fresh("sum")
    b.node("torch.ops.aten.sum.dim_IntList", [("self", _t(x), 1), ("dim", {"as_ints": [1]}, 1),
                                              ("keepdim", {"as_bool": True}, 1)], [_t(s)], s, module)
    b.tensor_values[s] = _meta([SYMBOL, 1])
    out = b.fresh("sub")
    b.node("torch.ops.aten.sub.Tensor", [("self", _t(x), 1), ("other", _t(s), 1)], [_t(out)], out, module)
    b.tensor_values[out] = _meta([SYMBOL, WIDTH])
    return out


def _cat_split(b: _Builder, x: str, params: list[tuple[str, str]], module: str) -> str:
    cat = b.fresh("cat")
    b.node("torch.ops.aten.cat.default", [("tensors", {"as_tensors": [{"name": x}, {"name": x}]}, 1),
                                          ("dim", {"as_int": 1}, 1)], [_t(cat)], cat, module)
    b.tensor_values[cat] = _meta([SYMBOL, 2 * WIDTH])
    split = b.fresh("split")
    parts = [b.fresh("getitem"), b.fresh("getitem")]
    b.node("torch.ops.aten.split.Tensor", [("self", _t(cat), 1), ("split_size", {"as_int": WIDTH}, 1),
                                           ("dim", {"as_int": 1}, 1)],
           [{"as_tensors": [{"name": p} for p in parts]}], split, module)
    for p in parts:
        b.tensor_values[p] = _meta([SYMBOL, WIDTH])
    return parts[b.rng.randrange(2)]


def _plus_full_of_sym_size(b: _Builder, x: str, params: list[tuple[str, str]], module: str) -> str:
    size = b.fresh("sym_size_int")
    b.node("torch.ops.aten.sym_size.int", [("self", _t(x), 1), ("dim", {"as_int": 0}, 1)],
           [{"as_sym_int": {"as_name": size}}], size, module)
    b.sym_int_values[size] = {"as_expr": {"expr_str": SYMBOL, "hint": {"as_int": HINT}}}
    full = b.fresh("full")
    b.node("torch.ops.aten.full.default",
           [("size", {"as_sym_ints": [{"as_name": size}, {"as_int": WIDTH}]}, 1),
            ("fill_value", {"as_float": round(b.rng.uniform(0, 1), 4)}, 1),
            ("dtype", {"as_scalar_type": FLOAT32}, 2), ("layout", {"as_layout": STRIDED}, 2),
            ("device", {"as_device": CPU}, 2), ("pin_memory", {"as_bool": False}, 2)],
           [_t(full)], full, module)
    b.tensor_values[full] = _meta([SYMBOL, WIDTH])
    out = b.fresh("add")
    b.node("torch.ops.aten.add.Tensor", [("self", _t(x), 1), ("other", _t(full), 1)], [_t(out)], out, module)
    b.tensor_values[out] = _meta([SYMBOL, WIDTH])
    return out


def _index(b: _Builder, x: str, params: list[tuple[str, str]], module: str) -> str:
    out = b.fresh("index")
    b.node("torch.ops.aten.index.Tensor",
           [("self", _t(x), 1),
            ("indices", {"as_optional_tensors": [{"as_none": True}, {"as_tensor": {"name": "idx"}}]}, 1)],
           [_t(out)], out, module)
    b.tensor_values[out] = _meta([SYMBOL, WIDTH])
    return out


def _through_half(b: _Builder, x: str, params: list[tuple[str, str]], module: str) -> str:
    half = b.fresh("to")
    b.node("torch.ops.aten.to.dtype", [("self", _t(x), 1), ("dtype", {"as_scalar_type": FLOAT16}, 1),
                                       ("non_blocking", {"as_bool": False}, 1), ("copy", {"as_bool": False}, 1),
                                       ("memory_format", {"as_memory_format": CONTIGUOUS}, 1)],
           [_t(half)], half, module)
    b.tensor_values[half] = _meta([SYMBOL, WIDTH], dtype=FLOAT16)
    out = b.fresh("to")
    b.node("torch.ops.aten.to.dtype", [("self", _t(half), 1), ("dtype", {"as_scalar_type": FLOAT32}, 1)],
           [_t(out)], out, module)
    b.tensor_values[out] = _meta([SYMBOL, WIDTH])
    return out


# (upper end of the draw's slice of [0, 1), step): a step is taken with the probability of its slice.
_STEPS = ((0.18, _linear), (0.30, _pointwise), (0.36, _gelu), (0.50, _add), (0.58, _square), (0.64, _view),
          (0.72, _minus_row_sum), (0.80, _cat_split), (0.88, _plus_full_of_sym_size), (0.94, _index),
          (1.0, _through_half))


def _block(b: _Builder, x: str, params: list[tuple[str, str]], module: str) -> str:
    """One random step of the model; returns the new current value (shape [s77, WIDTH], float32)."""
    r = b.rng.random()
    step = next(step for end, step in _STEPS if r < end)
    return step(b, x, params, module)


def _branch(rng: random.Random, name: str, ops: list[str]) -> dict[str, Any]:
    """A cond branch: x -> ops... as its own graph, with its own tensor values."""
    b = _Builder(rng, 1000)
    b.tensor_values["x"] = _meta([SYMBOL, WIDTH])
    cur = "x"
    for op in ops:
        cur = b.unary(op, cur, "branch")
    return {"name": name, "graph": {"inputs": [_t("x")], "outputs": [_t(cur)], "nodes": b.nodes,
                                    "tensor_values": b.tensor_values, "sym_int_values": {}, "sym_bool_values": {},
                                    "is_single_tensor_return": False, "custom_obj_values": {}, "sym_float_values": {}}}


def _cond(b: _Builder, x: str, index: int) -> str:
    s = b.fresh("sum")
    b.node("torch.ops.aten.sum.default", [("self", _t(x), 1)], [_t(s)], s, "gate")
    b.tensor_values[s] = _meta([])
    gt = b.fresh("gt")
    b.node("torch.ops.aten.gt.Scalar", [("self", _t(s), 1), ("other", {"as_int": 0}, 1)], [_t(gt)], gt, "gate")
    b.tensor_values[gt] = _meta([], dtype=12)
    out = b.fresh("getitem")
    true_ops = [b.rng.choice(["sin.default", "relu.default", "cos.default"]) for _ in range(3)]
    false_ops = [b.rng.choice(["neg.default", "cos.default"]) for _ in range(2)]
    b.node("torch.ops.higher_order.cond",
           [("", _t(gt), 1), ("", {"as_graph": _branch(b.rng, f"true_graph_{index}", true_ops)}, 1),
            ("", {"as_graph": _branch(b.rng, f"false_graph_{index}", false_ops)}, 1),
            ("", {"as_tensors": [{"name": x}]}, 1)],
           [_t(out)], b.fresh("cond"), "gate")
    b.nodes[-1]["is_hop_single_tensor_return"] = False
    b.tensor_values[out] = _meta([SYMBOL, WIDTH])
    return out


def _spec(children: int) -> str:
    leaf = {"type": None, "context": None, "children_spec": []}
    return json.dumps([1, {"type": "builtins.tuple", "context": "null", "children_spec": [
        {"type": "builtins.tuple", "context": "null", "children_spec": [leaf] * children},
        {"type": "builtins.dict", "context": "[]", "children_spec": []}]}])


def make_exported_program(num_nodes: int, seed: int = 0) -> dict[str, Any]:
    """The JSON dict of a torch.export ExportedProgram with about `num_nodes` top-level nodes."""
    rng = random.Random(seed)
    b = _Builder(rng, 10)
    b.tensor_values["x"] = _meta([SYMBOL, WIDTH])
    b.tensor_values["idx"] = _meta([WIDTH], dtype=INT64)
    params: list[tuple[str, str]] = []
    cur = "x"
    conds = 0
    while len(b.nodes) < num_nodes:
        if len(b.nodes) > 0 and rng.random() < 0.004:
            cur = _cond(b, cur, conds)
            conds += 1
        else:
            cur = _block(b, cur, params, f"layers_{len(params)}")
    inputs = [_t(name) for pair in params for name in pair] + [_t("x"), _t("idx")]
    input_specs = [{"parameter": {"arg": {"name": name}, "parameter_name": f"layers.{i}.{kind}"}}
                   for i, pair in enumerate(params) for name, kind in zip(pair, ("weight", "bias"), strict=True)]
    input_specs += [{"user_input": {"arg": _t("x")}}, {"user_input": {"arg": _t("idx")}}]
    graph = {"inputs": inputs, "outputs": [_t(cur)], "nodes": b.nodes, "tensor_values": b.tensor_values,
             "sym_int_values": b.sym_int_values, "sym_bool_values": {}, "is_single_tensor_return": False,
             "custom_obj_values": {}, "sym_float_values": {}}
    return {
        "graph_module": {
            "graph": graph,
            "signature": {"input_specs": input_specs, "output_specs": [{"user_output": {"arg": _t(cur)}}]},
            "module_call_graph": [
                {"fqn": "", "signature": {"inputs": [], "outputs": [], "in_spec": _spec(2), "out_spec": _spec(1),
                                          "forward_arg_names": ["x", "idx"]}},
                *[{"fqn": f"layers_{i}", "signature": None} for i in range(len(params))],
            ],
            "metadata": {},
            "treespec_namedtuple_fields": {},
        },
        "opset_version": {"aten": 10},
        "range_constraints": {"s77": {"min_val": 2, "max_val": 4096}},
        "schema_version": {"major": 8, "minor": 20},
        "verifiers": [],
        "torch_version": "2.13.0+cpu",
        "guards_code": [],
    }


def parameter_shapes(program: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """The state-dict entries the program expects (for loading it with torch's deserializer)."""
    values = program["graph_module"]["graph"]["tensor_values"]
    params = [s["parameter"] for s in program["graph_module"]["signature"]["input_specs"] if "parameter" in s]
    return {p["parameter_name"]: tuple(s["as_int"] for s in values[p["arg"]["name"]]["sizes"]) for p in params}


def make_exported_program_json(num_nodes: int, seed: int = 0) -> str:
    """`make_exported_program` as the JSON text torch writes (json.dumps with default separators)."""
    return json.dumps(make_exported_program(num_nodes, seed))
