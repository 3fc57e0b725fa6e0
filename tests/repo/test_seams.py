"""The seams between modules are public names (issue 46 item 2), read from the source (ast).

* No module imports another's private name: `from .layout import _given` is a seam nobody sees from
  the outside; a private module (`thrift/_base.py`, `cli/commands/_ops.py`) is a room's own file
  and may be imported within the package, a private name inside a module may not.
* A module that lists its names (`__all__`) lists every name the others import from it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.support.paths import REPO

ROOTS = {"externspec": REPO / "python/externspec", "externspec.codegen": REPO / "codegen"}


def _modules() -> Iterator[tuple[str, Path]]:
    for package, root in ROOTS.items():
        for path in sorted(root.rglob("*.py")):
            if "_generated" in path.parts:
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            yield ".".join([package, *parts]), path


MODULES = dict(_modules())


def _imports(name: str, path: Path) -> Iterator[tuple[int, str, str]]:
    """(line, module, imported name) of each first-party `from ... import`."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")
            base = base[:len(base) - node.level + 1]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        if module.split(".")[0] == "externspec" or module.startswith("codegen"):
            module = module.replace("codegen", "externspec.codegen", 1) if module.startswith("codegen") else module
            for alias in node.names:
                yield node.lineno, module, alias.name


def _all(path: Path) -> set[str] | None:
    """The names `__all__` lists; None without one, or with one built at import (`[*a, *b]`)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            try:
                return set(ast.literal_eval(node.value))
            except ValueError:
                return None
    return None


def test_no_module_imports_a_private_name_of_another() -> None:
    private = [f"{path.relative_to(REPO)}:{line}: from {module} import {imported}"
               for name, path in MODULES.items() for line, module, imported in _imports(name, path)
               if imported.startswith("_") and not imported.startswith("__")
               and f"{module}.{imported}" not in MODULES]
    assert private == [], "imports of private names (make the name public, and list it):\n" + "\n".join(private)


def test_a_module_that_lists_its_names_lists_every_name_imported_from_it() -> None:
    unlisted = []
    for name, path in MODULES.items():
        for line, module, imported in _imports(name, path):
            listed = _all(MODULES[module]) if module in MODULES else None
            if listed is not None and imported not in listed and f"{module}.{imported}" not in MODULES:
                unlisted.append(f"{path.relative_to(REPO)}:{line}: {imported} is not in {module}.__all__")
    assert unlisted == [], "\n".join(unlisted)


def test_the_seams_of_the_executors_are_listed() -> None:
    """The modules the two executors are split into name what they offer each other."""
    for module in ("layout", "ops", "op_policy", "plan", "proxy_executor", "call_layout"):
        assert _all(MODULES[f"externspec.abi.{module}"]), f"abi/{module}.py has no __all__"
