"""Run packages through the running torch's own runner (`torch._inductor.aoti_load_package`) against
the eager outputs recorded beside each (`<name>.eager.pt`, tests/support/matrix.py), importing torch
alone: for a torch environment with nothing of externspec installed, run isolated from this checkout,

    env -i PATH=/usr/bin:/bin /path/to/torch-env/bin/python -I tests/support/torch_runner.py PKG.pt2...

It registers the matrix's custom op from tests/support/matrix_ops.py by file path and prints, per
package, "equal to eager" or the runner's error; exit code 1 when any differs or fails."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import torch

runpy.run_path(str(Path(__file__).with_name("matrix_ops.py")))


def check(package: str) -> str:
    """'equal to eager at batches [...]', or the failure as `Type: message` on one line."""
    recorded = torch.load(package.removesuffix(".pt2") + ".eager.pt")
    try:
        model = torch._inductor.aoti_load_package(package)
        for inputs, want in zip(recorded["inputs"], recorded["outputs"], strict=True):
            got = model(*inputs)
            for g, w in zip(got, want, strict=True):
                torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
    except Exception as exc:  # every failure is a line of the report
        return f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    return f"equal to eager at batches {[x[0].shape[0] for x in recorded['inputs']]}"


def main(packages: list[str]) -> int:
    print(f"torch {torch.__version__}")
    results = [(p, check(p)) for p in packages]
    for p, result in results:
        print(f"{p}: {result}", flush=True)
    return 0 if all(r.startswith("equal") for _, r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
