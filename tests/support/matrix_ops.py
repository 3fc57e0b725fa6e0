"""The custom op of the cross-version matrix's packages (tests/support/matrix.py), importing torch alone:
a runner of any torch environment registers it by file path (`runpy.run_path`) with nothing of this
checkout on its path (tests/support/torch_runner.py).

Its kwarg-only int defaults the compiled wrapper passes in its int array while the node omits them
(tagged needs_fixed_stride_order, so Inductor does not apply the defaults into the call's kwargs:
docs/torch-compat.md, "What a real package shows"). Every argument moves the result by its own weight,
so a default read from the wrong slot changes the output."""

from __future__ import annotations

import torch

NS = "es_matrix"
_lib = torch.library.Library(NS, "DEF")
_lib.define("scale(Tensor x, int p=2, *, int k=3, float f=1.5, SymInt s=4) -> Tensor",
            tags=(torch.Tag.needs_fixed_stride_order,))


def _scale(x: torch.Tensor, p: int = 2, *, k: int = 3, f: float = 1.5, s: int = 4) -> torch.Tensor:
    return x * p + k * 0.5 + f * 0.25 + s * 0.125


_lib.impl("scale", _scale, "CompositeExplicitAutograd")
torch.library.register_fake(f"{NS}::scale", _scale, lib=_lib)
