"""The distribution ships every package: pyproject's explicit package list matches the tree."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).parents[1]


def test_every_python_package_is_listed_in_pyproject() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    package_dir: dict[str, str] = config["package-dir"]
    found = set()
    for package, directory in package_dir.items():
        root = REPO / directory
        for init in root.rglob("__init__.py"):
            relative = init.parent.relative_to(root)
            name = ".".join([package, *relative.parts])
            if not any(name.startswith(other + ".") or name == other
                       for other in package_dir if other != package and len(other) > len(package)):
                found.add(name)
    assert found == set(config["packages"])
