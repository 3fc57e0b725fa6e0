"""The layers of the installed package, read from its import statements (ast, nothing imported).

The graph has one node per module of `externspec` (python/externspec, and codegen/ installed as
`externspec.codegen`) and one edge per import of another of them, as a newcomer reads the file:

* every import statement counts, at module level or inside a function (a function-level import is
  still a dependency, only a later one), and so do imports under `if TYPE_CHECKING:` (a circle
  that only the type checker walks is still a circle to read; the idiom must not hide one);
* `from . import wire` names the module `externspec.wire`; `from .errors import DecodeError` names
  `externspec.errors`; `import externspec as es` names the package, i.e. its `__init__`;
* the parents a submodule import runs first (`externspec/__init__.py` before `externspec.wire`) are
  not edges: every module has them, and they would make every package a circle with its children.

On that graph: no import circle anywhere; the rooms (docs/architecture.md) import only downward,
wire below thrift below abi below cpp below triton below cli; the shipped package never imports the
code generator; the executor never imports the exporter; the emitters see only the IR and the
pre-pass, so every "can this schema be emitted" decision happens before rendering. Every module at
the package root is named in the layout of docs/architecture.md.
"""

from __future__ import annotations

import ast
import graphlib
import itertools
from pathlib import Path

from tests.support.paths import REPO

PACKAGE = REPO / "python/externspec"
CODEGEN = REPO / "codegen"
# Where each part of the installed package lives in the checkout (pyproject.toml's wheel.packages).
SOURCES = {"externspec": PACKAGE, "externspec.codegen": CODEGEN}

# The command-line front ends of the code generator and the compatibility checker.
CODEGEN_FRONT_ENDS = {"externspec.cli.commands.compat", "externspec.cli.commands.generate"}
# What an emitter may import from codegen: the IR, the pre-pass and the error type.
EMITTER_IMPORTS = {"ir", "naming", "errors"}
EMITTERS = ("emit_python", "emit_cpp", "naming")

# The rooms by flow, lowest first: a module may import its own room and the rooms below it.
ROOMS = ("externspec.wire", "externspec.thrift", "externspec.abi", "externspec.cpp", "externspec.triton",
         "externspec.cli")

Edges = dict[str, dict[str, int]]  # module -> {imported module: line of its first import}


def room_of(module: str) -> int | None:
    """The level of the room holding `module` (an index into ROOMS), None for a top-level module."""
    return next((level for level, room in enumerate(ROOMS) if module == room or module.startswith(room + ".")), None)


def module_files() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its `__init__.py`)."""
    out = {}
    for prefix, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((prefix, *parts))] = path
    return out


def imported_modules(module: str, path: Path, modules: set[str]) -> dict[str, int]:
    """The package's modules that `module` (the file `path`) imports, with the line of each."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            named = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            source = ".".join(p for p in (base, node.module or "") if p)
            named = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in node.names]
        else:
            continue
        for name in named:
            if name in modules and name != module:
                out[name] = min(out.get(name, node.lineno), node.lineno)
    return out


def import_graph() -> tuple[Edges, dict[str, Path]]:
    files = module_files()
    return {m: imported_modules(m, path, set(files)) for m, path in files.items()}, files


def cycles(edges: Edges) -> list[list[str]]:
    """The import circles, each as the modules it passes (the first repeated at the end): the circle
    graphlib finds, then again without that circle's first import, until none is left."""
    imports = {m: set(imported) for m, imported in edges.items()}
    found = []
    while True:
        try:
            graphlib.TopologicalSorter(imports).prepare()  # `imports` maps a module to what must come first
        except graphlib.CycleError as e:
            circle = list(reversed(e.args[1]))  # graphlib lists each module before the one importing it
            found.append(circle)
            imports[circle[0]].discard(circle[1])
        else:
            return found


def test_no_import_circle() -> None:
    edges, files = import_graph()
    found = []
    for circle in cycles(edges):
        steps = [f"{files[a].relative_to(REPO)}:{edges[a][b]} imports {b}" for a, b in itertools.pairwise(circle)]
        found.append(" -> ".join(circle) + "\n    " + "\n    ".join(steps))
    assert not found, "import circles:\n" + "\n".join(found)


def test_the_cycle_finder_reports_each_circle() -> None:
    edges: Edges = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1, "d": 1}, "d": {}, "e": {"f": 1}, "f": {"e": 1}}
    found = cycles(edges)
    assert sorted(" ".join(sorted(set(c))) for c in found) == ["a b c", "e f"]
    for circle in found:
        assert circle[0] == circle[-1] and all(b in edges[a] for a, b in itertools.pairwise(circle))


def test_the_graph_reads_function_level_and_type_checking_imports() -> None:
    edges, _ = import_graph()
    assert "externspec.cli.commands._ops" in edges["externspec.cli.commands.check_spec"]  # inside a function
    assert "externspec.abi.proxy_executor" in edges["externspec"]  # under `if TYPE_CHECKING:`


def test_package_never_imports_codegen() -> None:
    edges, _ = import_graph()
    offenders = {m: sorted(i for i in imported if i.startswith("externspec.codegen"))
                 for m, imported in edges.items()
                 if not m.startswith("externspec.codegen") and m not in CODEGEN_FRONT_ENDS}
    assert {m: found for m, found in offenders.items() if found} == {}


def test_executor_and_exporter_never_import_each_other() -> None:
    """Both write Arguments with the argument writer and lay nodes out with abi.layout; neither is
    the other's part (issue 37: the exporter imported the executor for its layout)."""
    edges, _ = import_graph()
    assert "externspec.abi.exporter" not in edges["externspec.abi.proxy_executor"]
    assert "externspec.abi.proxy_executor" not in edges["externspec.abi.exporter"]


def test_emitters_import_only_the_ir_and_the_prepass() -> None:
    edges, _ = import_graph()
    for name in EMITTERS:
        local = {m.removeprefix("externspec.codegen.") for m in edges[f"externspec.codegen.{name}"]}
        assert local <= EMITTER_IMPORTS, (name, local - EMITTER_IMPORTS)


def test_rooms_import_only_downward() -> None:
    edges, files = import_graph()
    upward = [f"{files[m].relative_to(REPO)}:{line} imports {i} (room {ROOMS[room_of(i)]}, "
              f"above {ROOMS[room_of(m)]})"
              for m, imported in edges.items() if room_of(m) is not None
              for i, line in imported.items()
              if room_of(i) is not None and room_of(i) > room_of(m)]
    assert not upward, "imports from a higher room:\n" + "\n".join(upward)


def test_the_room_check_sees_each_room() -> None:
    edges, _ = import_graph()
    assert [room_of(m) for m in ("externspec.wire.version", "externspec.thrift", "externspec.abi.proxy_executor",
                                 "externspec.cpp.binding", "externspec.cli.commands.inspect",
                                 "externspec.errors", "externspec.cpp_include", "externspec.triton")] == \
        [0, 1, 2, 3, 5, None, None, 4]
    assert "externspec.wire.decision" in edges["externspec.thrift"] and "externspec.abi.layout" in edges[
        "externspec.cli.commands.inspect"]  # the rooms above do use the ones below
    assert "externspec.abi.op_policy" in edges["externspec.cpp"]


def documented_root() -> set[str]:
    """The package-root files and folders named in docs/architecture.md's Layout table (its first
    column: `python/externspec/name` and the bare names after it in the same cell)."""
    names = set()
    for line in (REPO / "docs/architecture.md").read_text(encoding="utf-8").splitlines():
        cells = line.split("|")
        if len(cells) > 2 and "`python/externspec/" in cells[1]:
            names |= {n.removeprefix("python/externspec/").split("/")[0] for n in cells[1].split("`")[1::2]}
    return names


def test_every_module_at_the_package_root_is_in_the_layout() -> None:
    """The root holds what sits below every room (the old module paths, aliases of moved modules, are
    gone): a module added there is one a newcomer must find in the layout."""
    root = {p.name for p in PACKAGE.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    assert root - documented_root() == set()
