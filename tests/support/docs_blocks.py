"""The commands and snippets of README.md and docs/ (issue 44, item 3): every fenced `sh` and `python`
block has a mark on the line before it, `<!-- docs-test -->` (run as written, from the repository's
root, and exit 0) or `<!-- docs-test: not run: REASON -->` (why a reader's block cannot run here: the
reason is data, listed with the blocks). A snippet defines what it uses: each block runs alone.

tests/repo/test_docs_commands.py runs the marked blocks in the development environment (`make test`);
`python -m tests.support.docs_blocks` (`make docs-fresh-env`, in CI) runs them in a fresh one: a new
virtual environment without the checkout on its path, holding the torch of this one and externspec
installed from the wheel the README's build makes (`pip wheel --no-build-isolation .`, cached by the
packaging tests: tests/packaging/wheelenv.py), so the blocks see only what a user's install gives.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import REPO

FRESH = "docs-venv"  # the fresh environment's folder beside the packaging tests' venv
_MARK = re.compile(r"^<!-- docs-test(?:: not run: (?P<reason>[^\n]+?))? -->$")
_FENCE = re.compile(r"^```(sh|python)\n(.*?)^```$", re.M | re.S)


@dataclass(frozen=True)
class Block:
    """A fenced sh or python block: `where` as `file:line` (its fence), its mark's reason (None: the
    block runs; "" when it has no mark)."""

    where: str
    language: str
    text: str
    reason: str | None


def documents() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def blocks() -> list[Block]:
    """Every sh and python block of README.md and docs/, with its mark."""
    found = []
    for path in documents():
        text = path.read_text(encoding="utf-8")
        for m in _FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
            mark = _MARK.match(before)
            reason = "" if mark is None else mark.group("reason")
            found.append(Block(f"{path.relative_to(REPO)}:{line}", m.group(1), m.group(2), reason))
    return found


def stray_marks() -> list[str]:
    """`file:line` of each docs-test mark that is not right before a sh or python block."""
    stray = []
    for path in documents():
        lines = path.read_text(encoding="utf-8").split("\n")
        for i, line in enumerate(lines):
            if "docs-test" in line and line.startswith("<!--") and (
                    not _MARK.match(line) or i + 1 >= len(lines) or lines[i + 1] not in ("```sh", "```python")):
                stray.append(f"{path.relative_to(REPO)}:{i + 1}")
    return stray


def run(block: Block, python: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run `block` from the repository's root with `python` (and its folder's commands first on PATH,
    nothing of the checkout on PYTHONPATH)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    command = ["bash", "-c", "set -euo pipefail\n" + block.text] if block.language == "sh" else \
        [str(python), "-c", block.text]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


def main() -> int:
    """The fresh environment: made (or taken from the cache), then every block marked to run, run in it."""
    from tests.packaging.wheelenv import CACHE, venv_with_wheel, wheel_key  # imports torch

    started = time.monotonic()
    shutil.rmtree(CACHE / wheel_key() / FRESH, ignore_errors=True)
    python = venv_with_wheel(FRESH)
    print(f"fresh environment {python.parent.parent}: {time.monotonic() - started:.0f} s", flush=True)
    passed = failed = 0
    for block in blocks():
        if block.reason is not None:
            continue
        began = time.monotonic()
        r = run(block, python)
        ok = r.returncode == 0
        passed, failed = passed + ok, failed + (not ok)
        print(f"{block.where}: {'ok' if ok else f'exit {r.returncode}'} ({time.monotonic() - began:.0f} s)", flush=True)
        if not ok:
            print(r.stdout[-4000:], r.stderr[-4000:], sep="\n", file=sys.stderr)
    print(f"docs: {passed} passed, {failed} failed ({time.monotonic() - started:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
