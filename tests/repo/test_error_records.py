"""Errors are data: every problem is a record (kind, path, message, key) made where it is found,
carried as a record across the C++ binding, and rendered by the command line from the record.

Three guards: the C++ decoder names exactly Python's kinds; no code in the package decides anything
by matching an error message's text (an AST lint, itself tested on the patterns it replaced); and the
CLI's JSON kinds and paths are the records' own, for the whole conformance corpus.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import externspec as es
from externspec import cli
from externspec.cli.commands._documents import DOCUMENT_TYPES
from externspec.errors import ERROR_KINDS
from tests.support.executors import Executor
from tests.support.paths import CONFORMANCE, REPO

PACKAGE = REPO / "python" / "externspec"
MANIFEST = json.loads((CONFORMANCE / "manifest.json").read_text(encoding="utf-8"))


def test_cpp_decoder_names_pythons_error_kinds() -> None:
    """Both read wire/error_kinds.def: C++'s IssueKind and its names are the table's, typed nowhere else."""
    wire = (PACKAGE / "include" / "externspec" / "wire" / "issues.h").read_text(encoding="utf-8")
    assert wire.count('#include "error_kinds.def"') == 2  # the enumerators, then their names
    assert not re.search(rf'"({"|".join(ERROR_KINDS)})"', wire)  # no kind's name typed in C++
    assert list(ERROR_KINDS) == ["limit", "union", "missing", "unknown_key", "enum", "int_range", "type", "encoding",
                                 "truncated", "syntax"]
    assert all(ERROR_KINDS.values())


# --- the lint ---------------------------------------------------------------------------------------

_TEXT_METHODS = {"startswith", "endswith", "removeprefix", "removesuffix", "find", "rfind", "index", "split",
                 "rsplit", "partition", "rpartition", "replace"}
_RE_FUNCTIONS = {"match", "search", "fullmatch", "findall", "finditer", "split", "sub"}
_MESSAGE_NAMES = {"message", "msg"}


def _exception_names(tree: ast.AST) -> set[str]:
    return {h.name for h in ast.walk(tree) if isinstance(h, ast.ExceptHandler) and h.name}


def _is_message_text(node: ast.AST, exceptions: set[str]) -> bool:
    """An expression holding an error's message: `str(exc)`, `exc.args`, `x.message`, `x["message"]`,
    `msg`, or anything built from one of them."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "str" and sub.args:
            arg = sub.args[0]
            if isinstance(arg, ast.Name) and arg.id in exceptions:
                return True
        if isinstance(sub, ast.Attribute) and (sub.attr in _MESSAGE_NAMES or
                                               (sub.attr == "args" and isinstance(sub.value, ast.Name)
                                                and sub.value.id in exceptions)):
            return True
        if isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Constant) and sub.slice.value in _MESSAGE_NAMES:
            return True
        if isinstance(sub, ast.Name) and sub.id in _MESSAGE_NAMES:
            return True
    return False


def message_matches(source: str) -> list[int]:
    """Lines of `source` that inspect an error message's text to decide something."""
    tree = ast.parse(source)
    exceptions = _exception_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn, ast.Eq, ast.NotEq))
                                                 for op in node.ops):
            operands = [node.left, *node.comparators]
            if any(_is_message_text(o, exceptions) for o in operands):
                found.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            on_text = func.attr in _TEXT_METHODS and _is_message_text(func.value, exceptions)
            on_pattern = func.attr in _RE_FUNCTIONS and any(_is_message_text(a, exceptions) for a in node.args)
            if on_text or on_pattern:
                found.append(node.lineno)
    return found


@pytest.mark.parametrize("snippet", [
    'check(v, [(e["path"], e["message"]) for e in error.errors() if e["message"].startswith("unknown key")])',
    'unknown = [(path, msg) for path, msg in errors if msg.startswith("unknown key")]',
    'key = message.removeprefix("unknown key ").strip("`")',
    'mismatch = "has wire type" in e.errors()[0]["message"]',
    'try:\n    f()\nexcept ValueError as e:\n    path = str(e).split(": ", 2)[1]',
    'node = _NODE.match(problem.message)',
    'kind = next(k for k, p in PATTERNS if p.search(message))',
])
def test_the_lint_finds_decisions_made_from_message_text(snippet: str) -> None:
    assert message_matches(snippet), snippet


def test_no_code_decides_from_an_error_messages_text() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_generated" in path.parts:
            continue
        offenders += [f"{path.relative_to(REPO)}:{line}" for line in message_matches(path.read_text(encoding="utf-8"))]
    assert offenders == [], "decisions made by reading an error message's text:\n" + "\n".join(offenders)


def test_no_cpp_code_reads_a_problem_back_out_of_its_message() -> None:
    pattern = re.compile(r"\bmessage(\(\))?\s*\.\s*(find|rfind|substr|compare|starts_with|ends_with)\b")
    sources = [*(PACKAGE / "include" / "externspec").rglob("*.h"), *(PACKAGE / "cpp" / "csrc").rglob("*.[ch]*")]
    assert {p.name for p in sources} >= {"wire.h", "proxy_executor.cpp", "module.cpp"}  # the globs find the code
    offenders = [f"{p.relative_to(REPO)}:{n}" for p in sources
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert offenders == []


# --- records, end to end ----------------------------------------------------------------------------

def _validate_json(path: Path, type_name: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        cli.main(["validate", "--format", "json", "--type", type_name, str(path)])
    (result,) = json.loads(out.getvalue())
    return result


@pytest.mark.parametrize(("name", "expect"), [(n, e) for n, e in sorted(MANIFEST["invalid"].items())
                                              if e["type"] in DOCUMENT_TYPES])
def test_cli_json_kind_and_path_are_the_records(name: str, expect: dict[str, str]) -> None:
    result = _validate_json(CONFORMANCE / "invalid" / name, expect["type"])
    first = result["errors"][0]
    if expect["error"] == "DecodeError":
        assert (first["kind"], first["path"]) == (expect["kind"], expect["path"])
    else:
        assert (first["kind"], first["path"]) == ("version", expect["path"])


def test_version_error_is_data() -> None:
    path = CONFORMANCE / "invalid" / "versioned_newer_minor_unknown_key.json"
    with pytest.raises(es.VersionError) as info:
        es.load(path, es.ExternKernelNodes)
    e = info.value
    assert (e.path, e.key, e.source) == ("$.nodes[0].node", "new_field", str(path))
    assert str(e) == f"{path}: {e.path}: {e.message}" and e.message.startswith("key `new_field` is unknown")


def test_executors_say_which_node_an_error_is_about(executor: Executor) -> None:
    good = {"name": "buf0", "node": {"target": "aten::neg.default",
                                     "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}, "kind": 1}],
                                     "outputs": [{"as_tensor": {"name": "buf0"}}], "metadata": {}}}
    bad = json.loads(json.dumps(good))
    bad["name"] = "buf1"
    bad["node"]["target"] = "aten::no_such_op_anywhere.default"
    spec = es.loads(json.dumps({"nodes": [good, bad]}), es.ExternKernelNodes)
    with pytest.raises(es.SpecMismatchError) as info:
        executor(spec)
    assert info.value.node == 1
    twice = es.loads(json.dumps({"nodes": [good, good]}), es.ExternKernelNodes)
    with pytest.raises(es.SpecMismatchError) as info:
        executor(twice)
    assert info.value.node == 1


@pytest.mark.slow
def test_cpp_decode_errors_cross_the_binding_as_records(tmp_path: Path) -> None:
    spec = tmp_path / "bad.json"
    spec.write_text(json.dumps({"nodes": [{"name": "b", "node": {"target": "aten::neg.default", "inputs": [],
                                                               "outputs": [], "metadata": {}, "extra": 1}}],
                                "schema_version": {"major": 1, "minor": 0}}))
    errors = {}
    for kind in ("python", "cpp"):
        with pytest.raises(es.DecodeError) as info:
            Executor(kind)(str(spec))
        errors[kind] = info.value.errors()
        assert info.value.source == str(spec)
    assert errors["python"] == errors["cpp"]
    assert [(e["kind"], e["path"], e["key"]) for e in errors["cpp"]] == [("unknown_key", "$.nodes[0].node", "extra")]


@pytest.mark.slow
def test_a_process_that_raised_through_the_binding_exits_cleanly(tmp_path: Path) -> None:
    """The binding keeps the error classes and the record factory for the life of the process: held
    in static py::objects, they were released by the C++ exit handlers after Python finalized, and a
    pytest process that had raised through the binding aborted at exit (`PyThreadState_Get ...
    finalizing`, status 134, after every test had passed)."""
    spec = tmp_path / "bad.json"
    spec.write_text('{"nodes": [1]}')
    (tmp_path / "test_raise.py").write_text(
        "import pytest\n"
        "import externspec as es\n\n"
        "def test_raise():\n"
        "    with pytest.raises(es.DecodeError):\n"
        f"        es.cpp.ProxyExecutor({str(spec)!r})\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_raise.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]
