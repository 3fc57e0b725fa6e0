"""Every documented command runs as written (issue 44, item 3): the fenced blocks of README.md and
docs/ marked `<!-- docs-test -->` on the line before them run from the repository's root, shell
blocks with bash (`set -euo pipefail`, the `externspec` of this Python first on PATH) and Python
blocks with this Python, and must exit 0. A snippet defines what it uses: it runs alone."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO

MARK = "<!-- docs-test -->"
_BLOCK = re.compile(r"^" + re.escape(MARK) + r"\n```(sh|python)\n(.*?)^```$", re.M | re.S)


def marked_blocks() -> list[tuple[str, str, str]]:
    """(where, language, text) of each marked block, `where` as `file:line`."""
    found = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for m in _BLOCK.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append((f"{path.relative_to(REPO)}:{line}", m.group(1), m.group(2)))
        assert text.count(MARK) == len(_BLOCK.findall(text)), f"{path}: a {MARK} mark not before a sh or python fence"
    return found


BLOCKS = marked_blocks()


def test_the_documents_mark_blocks() -> None:
    assert {where.split(":")[0] for where, _, _ in BLOCKS} >= {"README.md", "docs/cli.md", "docs/torch-compat.md"}


@pytest.mark.parametrize(("where", "language", "text"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_marked_block_runs(where: str, language: str, text: str) -> None:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    command = ["bash", "-c", "set -euo pipefail\n" + text] if language == "sh" else [sys.executable, "-c", text]
    r = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{where}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
