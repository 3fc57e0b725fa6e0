"""The command line as a user runs it: `python -m externspec ARGS` in a fresh process, from the
checkout's root unless told otherwise. The tests that run the command go through here."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.support.paths import REPO


def command(*args: str) -> list[str]:
    """The argv of `externspec ARGS` (for a test that drives the process itself: a pipe, a terminal)."""
    return [sys.executable, "-m", "externspec", *args]


def externspec(*args: str, cwd: Path = REPO, env: Mapping[str, str] | None = None,
               timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the command; its output as text."""
    return subprocess.run(command(*args), capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)


def externspec_bytes(*args: str, stdin: bytes | None = None, cwd: Path = REPO,
                     timeout: float = 300) -> subprocess.CompletedProcess[bytes]:
    """Run the command with `stdin`; its output as bytes."""
    return subprocess.run(command(*args), capture_output=True, input=stdin, cwd=cwd, timeout=timeout)
