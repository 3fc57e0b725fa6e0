"""Every documented command runs as written (issue 44, item 3): each fenced sh and python block of
README.md and docs/ is marked, `<!-- docs-test -->` or `<!-- docs-test: not run: REASON -->`
(tests/support/docs_blocks.py), and the blocks marked to run run from the repository's root, shell
blocks with bash (`set -euo pipefail`, the `externspec` of this Python first on PATH) and Python
blocks with this Python, and exit 0. A snippet defines what it uses: it runs alone. `make
docs-fresh-env` (CI) runs the same blocks in a fresh environment."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support import docs_blocks

BLOCKS = docs_blocks.blocks()
RUNS = [b for b in BLOCKS if b.reason is None]


def test_every_block_is_marked_and_every_mark_is_before_a_block() -> None:
    assert [b.where for b in BLOCKS if b.reason == ""] == [], "mark each block: docs-test, or docs-test: not run: WHY"
    assert docs_blocks.stray_marks() == []


def test_the_documents_run_blocks_of_each_kind() -> None:
    assert {b.where.split(":")[0] for b in RUNS} >= {"README.md", "docs/cli.md", "docs/torch-compat.md"}
    assert {b.language for b in RUNS} == {"sh", "python"}


@pytest.mark.parametrize("block", RUNS, ids=[b.where for b in RUNS])
def test_marked_block_runs(block: docs_blocks.Block) -> None:
    r = docs_blocks.run(block, Path(sys.executable))
    assert r.returncode == 0, f"{block.where}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
