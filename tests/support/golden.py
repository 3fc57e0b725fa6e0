"""The one golden switch: expected files are compared with what the code writes, or, under
`pytest --update-golden` (tests/conftest.py), rewritten to it for a reviewer to read as a diff."""

from __future__ import annotations

from pathlib import Path


class Golden:
    """`golden.check(path, text)`: `path` holds `text`; with `update`, it is written first."""

    def __init__(self, update: bool):
        self.update = update

    def check(self, path: Path, text: str) -> None:
        if self.update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        assert path.exists(), f"{path} is missing: run pytest with --update-golden"
        assert path.read_text(encoding="utf-8") == text, \
            f"{path} is stale: run pytest with --update-golden and review the diff"
