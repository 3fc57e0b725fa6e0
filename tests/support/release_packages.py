"""Packages compiled by the supported torch releases older than any environment `make setup` makes
(2.11 and 2.12), kept in the tree under tests/data/torch<release>/ and run under the running torch
by tests/torch/test_torch_releases.py (a package's model library calls torch through its C shim, so it
runs under a later torch; docs/torch-compat.md).

Three small packages per release (about 0.4 MB each): `lite_mlp` (lite mode, a dynamic batch, addmm
nodes that omit the kwarg-only beta/alpha), `lite_index_sort` (lite mode, an `index_select` extern
call that an out-of-range index makes fail) and `kwonly` (default mode, a custom op tagged
`needs_fixed_stride_order` whose kwarg-only defaults are omitted). Regenerate them in an
environment of that release (its torch, and requirements-dev.txt's pydantic):

    PYTHONPATH=python:. <venv of torch 2.11 or 2.12>/bin/python -m tests.support.release_packages
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import torch

from externspec import _torch_support
from tests.support.paths import REPO

DATA = REPO / "tests" / "data"
RELEASES = ("2.11", "2.12")


def builders() -> dict[str, Callable[[], Path]]:
    """What each package is: the tests' own models, compiled by the running torch (cached)."""
    from . import aoti_models, zoo

    return {"lite_mlp": lambda: zoo.lite_package("mlp"),
            "lite_index_sort": lambda: zoo.lite_package("index_sort"),
            "kwonly": lambda: aoti_models.compiled_package(aoti_models.KwOnlyFixed)}


def path(release: str, name: str) -> Path:
    return DATA / f"torch{release}" / f"{name}.pt2"


def main() -> None:
    release = ".".join(map(str, _torch_support.minor_release(torch.__version__)))
    if release not in RELEASES:
        raise SystemExit(f"torch {torch.__version__} is running; these packages are for torch {' and '.join(RELEASES)}")
    for name, build in builders().items():
        out = path(release, name)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(build(), out)
        print(out)


if __name__ == "__main__":
    main()
