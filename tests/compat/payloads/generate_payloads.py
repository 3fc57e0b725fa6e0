"""Write the documents of one released schema version into tests/compat/payloads/vX.Y/.

Run once when a version is released (`python tests/compat/payloads/generate_payloads.py 1.0`),
then check the files in and never regenerate them: they are the evidence that documents written
by that release keep decoding. The script refuses to overwrite an existing version folder.

What it writes, with real torch (2.13) and the externspec of this checkout:
* `extern_nodes_torch.json`: the *.wrapper.json that AOTInductor writes for a model calling a
  torch.library custom op and an aten fallback (torch-written: no schema_version);
* `extern_nodes_externspec.json`: the same nodes decoded and re-encoded by externspec, stamped
  with its SCHEMA_VERSION (from 1.2: as `externspec upgrade --name-defaults` writes them, with their
  call layout and producer);
* `node_spec_*.json`: single ExternKernelNode documents, one per call site;
* `exported_program.json`: torch.export's serialized program (models/model.json of a .pt2).
`index.json` lists every document with its type, for the Python and C++ decoder tests.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

import torch

import externspec as es
from externspec import aoti
from externspec.abi.exporter import producer
from externspec.abi.name_defaults import rewrite

HERE = Path(__file__).resolve().parent


@torch.library.custom_op("externspec_fixture::scale_shift", mutates_args=())
def scale_shift(x: torch.Tensor, scale: float, shift: int, flags: list[bool], mode: str) -> torch.Tensor:
    return x * scale + shift + sum(flags) + len(mode)


@scale_shift.register_fake
def _(x: torch.Tensor, scale: float, shift: int, flags: list[bool], mode: str) -> torch.Tensor:
    return torch.empty_like(x)


@torch.library.custom_op("externspec_fixture::split_parts", mutates_args=())
def split_parts(x: torch.Tensor, bias: torch.Tensor | None, sizes: list[int],
                dtype: torch.dtype | None = None) -> list[torch.Tensor]:
    y = x if bias is None else x + bias
    return [p.to(dtype or p.dtype).clone() for p in torch.split(y, sizes)]


@split_parts.register_fake
def _(x: torch.Tensor, bias: torch.Tensor | None, sizes: list[int],
      dtype: torch.dtype | None = None) -> list[torch.Tensor]:
    return [torch.empty(s, *x.shape[1:], dtype=dtype or x.dtype) for s in sizes]


class Model(torch.nn.Module):
    """Two custom ops (proxy-executor calls): static float/int/bool-list/str arguments, an
    optional tensor, an int list, an optional ScalarType and a list return."""

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = torch.ops.externspec_fixture.scale_shift(x, 2.5, 3, [True, False], "fast")
        a, b = torch.ops.externspec_fixture.split_parts(y.relu(), bias, [1, 3], dtype=torch.float64)
        return a * 2, b.sum(0)


def _extern_json_from_package(pt2: Path) -> tuple[str, str]:
    """The package's extern-kernel JSON and the wrapper source beside it."""
    with zipfile.ZipFile(pt2) as zf:
        names = [n for n in zf.namelist() if n.endswith(".wrapper.json") or (n.endswith(".json")
                 and "/data/aotinductor/" in n)]
        wrapper = [n for n in names if n.endswith(".json") and "/data/aotinductor/model/" in n
                   and not n.endswith("_metadata.json")]
        if not wrapper:
            raise SystemExit(f"no extern-kernel json in {pt2}: {zf.namelist()}")
        return zf.read(wrapper[0]).decode("utf-8"), zf.read(aoti.wrapper_source(wrapper[0])).decode("utf-8")


def main(version: str) -> None:
    out = HERE / f"v{version}"
    if out.exists():
        raise SystemExit(f"{out} exists: payloads of a released version are never regenerated")
    if f"{es.SCHEMA_VERSION.major}.{es.SCHEMA_VERSION.minor}" != version:
        raise SystemExit(f"this checkout writes schema {es.SCHEMA_VERSION.major}.{es.SCHEMA_VERSION.minor}, "
                         f"not {version}")
    torch.manual_seed(0)
    ep = torch.export.export(Model(), (torch.randn(4, 3), torch.randn(3)))
    index: list[dict[str, str]] = []
    final, out = out, HERE / f".v{version}.partial"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)

    from torch._export.serde.serialize import serialize
    program = serialize(ep).exported_program.decode("utf-8")
    (out / "exported_program.json").write_text(program, encoding="utf-8")
    index.append({"path": "exported_program.json", "type": "ExportedProgram", "writer": f"torch {torch.__version__}"})

    with tempfile.TemporaryDirectory() as tmp:
        pt2 = torch._inductor.aoti_compile_and_package(ep, package_path=str(Path(tmp) / "model.pt2"))
        extern, source = _extern_json_from_package(Path(pt2))
    (out / "extern_nodes_torch.json").write_text(extern, encoding="utf-8")
    index.append({"path": "extern_nodes_torch.json", "type": "ExternKernelNodes",
                  "writer": f"torch {torch.__version__} AOTInductor"})

    nodes = es.loads(extern, es.ExternKernelNodes)
    # As `externspec upgrade --name-defaults` writes it (schema 1.2 on): stamped, with its call layout
    # decided from the wrapper's num_ints and the producer.
    stamped, _ = rewrite(nodes, aoti.wrapper_call_lengths(source), None, producer())
    es.dump(stamped, out / "extern_nodes_externspec.json")
    index.append({"path": "extern_nodes_externspec.json", "type": "ExternKernelNodes",
                  "writer": f"externspec schema {version}"})
    for i, node in enumerate(nodes.nodes):
        name = f"node_spec_{i}.json"
        es.dump(node, out / name)
        index.append({"path": name, "type": "ExternKernelNode", "writer": f"externspec schema {version}"})

    (out / "index.json").write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    out.rename(final)
    print(f"wrote {len(index)} documents to {final}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "1.0")
