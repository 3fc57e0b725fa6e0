"""The model repository the Triton tests serve (tests/triton/): torch 2.15's and 2.13's lite packages of
the cross-version matrix, whose custom op `es_matrix::scale` comes from a C++ op library
(tests/triton/es_matrix_ops.cpp, given in `op_libraries`), a default-mode package with a C++ custom op
library (tests/packaging/custom_op_package.py), a package holding a torchbind object
(`load_custom_objects`; its classes from torch's libtorchbind_test.so, given in `op_libraries`), a
package whose extern call fails on an out-of-range index, and models the backend must refuse at
load, each for one reason.
"""

from __future__ import annotations

import functools
from pathlib import Path

import torch

from tests.packaging import custom_op_package
from tests.support import cpp_models, matrix, package_edits, torchbind_models
from tests.support.paths import REPO
from tests.support.triton_server import add_model

OPS_SOURCE = REPO / "tests" / "triton" / "es_matrix_ops.cpp"


@functools.cache
def es_matrix_library() -> Path:
    """libes_matrix_ops.so for the installed torch."""
    return custom_op_package.op_library(OPS_SOURCE, "es_matrix_ops")


def op_libraries(*paths: Path) -> str:
    return f'parameters {{ key: "op_libraries" value: {{ string_value: "{",".join(map(str, paths))}" }} }}\n'


def call_layout(name: str) -> str:
    return f'parameters {{ key: "call_layout" value: {{ string_value: "{name}" }} }}\n'


LOAD_CUSTOM_OBJECTS = 'parameters { key: "load_custom_objects" value: { string_value: "true" } }\n'


# Batching that merges: requests wait up to 200 ms for others (the tests send theirs together).
BATCHER = "dynamic_batching { max_queue_delay_microseconds: 200000 }\n"

# Models that serve: name -> (package, config lines after `backend`).
def serving_models() -> dict[str, tuple[Path, str]]:
    ops = op_libraries(es_matrix_library())
    return {
        # The call layouts stated (torch 2.15's wrapper passes a node's own arguments, 2.13's also the
        # omitted kwarg-only defaults); "auto" decides the same from the package (lite213_auto).
        "lite215": (matrix.package("2.15", "lite"), ops + call_layout("NODE_ARGUMENTS") + "max_batch_size: 16\n" +
                    BATCHER),
        "lite213": (matrix.package("2.13", "lite"), ops + call_layout("OMITTED_DEFAULTS_PASSED") +
                    "max_batch_size: 16\n"
                    "instance_group [{ count: 2, kind: KIND_CPU }]\n"),
        "lite213_auto": (matrix.package("2.13", "lite"), ops),
        "lite215_unbatched": (matrix.package("2.15", "lite"), ops + "max_batch_size: 0\n"),
        "default213": (matrix.package("2.13", "default"), ops),
        # issue 54 item 4: 131,072 spaces after a newline overflowed the stack of the recursive regex
        # that asked whether max_batch_size is stated, and killed the server; a comment states nothing
        "lite215_blank": (matrix.package("2.15", "lite"), ops + "\n" + " " * 131072 + "\n" * 20000 +
                          "# max_batch_size: 0\n"),
        "my_ops": (custom_op_package.package(), op_libraries(custom_op_package.ops_library())),
        # a bool input used as an index (issue 54 items 1 and 7): its bytes checked, batch mates apart
        "bool_index": (cpp_models.package("bool_index"), "max_batch_size: 16\n" + BATCHER),
        # an input and an output that are the batch dim alone, the config completed (issue 54 item 8)
        "rank1": (cpp_models.package("rank1"), ""),
        "index_sort": (matrix.package("2.12", "lite_index_sort"), ""),
        "torchbind": (torchbind_models.package("foo_ops"), op_libraries(torchbind_models.LIBRARY) +
                      LOAD_CUSTOM_OBJECTS),
    }


def refused_models(tmp: Path) -> dict[str, tuple[Path, str, str]]:
    """name -> (package, config lines, a part of the reason the repository index shows)."""
    corrupt = tmp / "corrupt.pt2"
    corrupt.write_bytes(b"PK\x03\x04 not a zip archive")
    exported = tmp / "exported_program.pt2"  # torch.export.save's .pt2: a program, no compiled model
    torch.export.save(torch.export.export(torch.nn.Linear(2, 2), (torch.randn(1, 2),)), exported)
    ops = op_libraries(es_matrix_library())
    lite = matrix.package("2.15", "lite")
    return {
        "corrupt": (corrupt, "", "not a zip archive (a .pt2 file is one): truncated or not a .pt2"),
        "exported_program": (exported, "", "an ExportedProgram saved by torch.export.save, not an AOTInductor package"),
        "missing_op_library": (lite, op_libraries(tmp / "libmissing.so"), "libmissing.so: cannot load"),
        "static_batched": (custom_op_package.package(), op_libraries(custom_op_package.ops_library()) +
                           "max_batch_size: 8\n", "max_batch_size: 8 asks for batching"),
        "wrong_dtype": (lite, ops + 'input [{ name: "INPUT__0", data_type: TYPE_FP64, dims: [8] }]\n'
                        "max_batch_size: 4\n", "input `INPUT__0`.data_type: TYPE_FP64 contradicts the package"),
        "wrong_dims": (lite, ops + 'input [{ name: "INPUT__0", data_type: TYPE_FP32, dims: [7] }]\n'
                       "max_batch_size: 4\n", "input `INPUT__0`.dims: [7] contradicts the package"),
        "too_big_batch": (lite, ops + "max_batch_size: 100\n", "more than the package allows (64)"),
        # Refused by the server itself on a machine without a GPU; the backend refuses KIND_GPU too when
        # built against a CPU torch (model_config.cpp), which a GPU machine with a CPU torch shows.
        "bad_call_layout": (lite, ops + call_layout("sideways"),
                            'parameters.call_layout: expected "auto", "NODE_ARGUMENTS" or "OMITTED_DEFAULTS_PASSED"'),
        "wrong_call_layout": (matrix.package("2.13", "lite"),
                              ops + call_layout("NODE_ARGUMENTS"),
                              "(aten::addmm): its call in the package's wrapper passes 4 tensors and 2 ints"),
        "torchbind_no_opt_in": (torchbind_models.package("foo_ops"), op_libraries(torchbind_models.LIBRARY),
                                "torchbind objects the package holds (`_torchbind_obj0`); loading them unpickles "
                                "package data, which runs code of their classes: pass AOTIRunnerOptions::"
                                "load_custom_objects = true (Python: load_custom_objects=True; Triton: the model's "
                                'parameter load_custom_objects, "true")'),
        "gpu_kind": (lite, ops + "instance_group [{ kind: KIND_GPU }]\n", "KIND_GPU"),
        # compiled for CPU instructions no machine here has (issue 54 item 2): refused before its
        # library is opened, where running it would have killed the server with SIGILL
        "wider_cpu": (package_edits.with_cpu_isa(lite, tmp / "wider_cpu.pt2", "AVX512 AVX10_2"), ops,
                      "the package was compiled for the CPU instructions AVX512 AVX10_2 (AOTI_CPU_ISA), and "
                      "externspec does not know AVX10_2 on x86_64"),
        "too_many_instances": (lite, ops + "instance_group [{ count: 1000, kind: KIND_CPU }, "
                                           "{ count: 1000, kind: KIND_CPU }]\n",
                               "instance_group.count: 2000 instances in all, more than the 1024"),
    }


def write_repository(root: Path) -> tuple[Path, dict[str, str]]:
    """The repository with every model above; returns it and the refused models' expected reasons."""
    repository = root / "models"
    for name, (package, config) in serving_models().items():
        add_model(repository, name, package, config)
    reasons = {}
    for name, (package, config, reason) in refused_models(root).items():
        add_model(repository, name, package, config)
        reasons[name] = reason
    return repository, reasons
