"""The layers, read from the import statements (ast, nothing imported): the runtime never imports
the code generator, the executor never imports the exporter, and the emitters see only the IR and
the pre-pass, so every "can this schema be emitted" decision happens before rendering."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python/externspec"
CODEGEN = ROOT / "codegen"

# The command-line front ends of the code generator and the compatibility checker.
CODEGEN_FRONT_ENDS = {"commands/compat.py", "commands/generate.py"}
# What an emitter may import from codegen: the IR, the pre-pass and the error type.
EMITTER_IMPORTS = {"ir", "naming", "errors"}


def imports(path: Path, package: str) -> set[str]:
    """Absolute module names a file imports (relative imports resolved against `package`)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names)
    return out


def package_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1])


def test_runtime_never_imports_codegen() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in CODEGEN_FRONT_ENDS:
            continue
        found = [m for m in imports(path, package_of(path)) if m == "externspec.codegen" or
                 m.startswith(("externspec.codegen.", "codegen"))]
        if found:
            offenders.append(f"{rel}: {sorted(found)}")
    assert offenders == []


def test_executor_never_imports_the_exporter() -> None:
    found = imports(PACKAGE / "runtime.py", "externspec")
    assert not {m for m in found if m == "externspec.export" or m.startswith("externspec.export.")}


def test_emitters_import_only_the_ir_and_the_prepass() -> None:
    for name in ("emit_python.py", "emit_cpp.py", "naming.py"):
        local = {m.split(".")[1] for m in imports(CODEGEN / name, "codegen") if m.startswith("codegen.")}
        assert local <= EMITTER_IMPORTS, (name, local - EMITTER_IMPORTS)
