"""Loading a spec never runs code from it: no import, no eval/exec, no unpickling, no library load.

Every way of running code that a hostile spec could aim at is replaced, while the spec is decoded
and loaded, by a tripwire that records the call and raises; the tests then check that the spec was
refused with a clear error (or, for plain data such as a string argument, loaded as data), that no
tripwire fired, and that the command a payload carries did not run. Targets resolve only against
ops already registered with the dispatcher (SECURITY.md).
"""

from __future__ import annotations

import _pickle
import base64
import builtins
import ctypes
import importlib
import json
import os
import pickle
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import torch

import externspec as es
from tests.support import custom_ops as co
from tests.support.paths import CONFORMANCE

X = torch.arange(6.0).reshape(2, 3)


class Tripped(BaseException):
    """Raised by a tripwire; a BaseException so that no `except Exception` in the code under test
    can swallow it."""


@contextmanager
def tripwires(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Replace every code-running entry point; yields the list of those that were called."""
    fired: list[str] = []
    real_import = builtins.__import__

    def wire(name: str) -> Any:
        def tripped(*args: Any, **kwargs: Any) -> Any:
            fired.append(f"{name}{args[:1]!r}")
            raise Tripped(name)

        return tripped

    def guarded_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        package = (globals or {}).get("__package__")
        absolute = importlib.util.resolve_name("." * level + name, package) if level else name
        if absolute not in sys.modules:  # a module that was not loaded before: a real import
            fired.append(f"import {absolute}")
            raise Tripped(absolute)
        return real_import(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", guarded_import)
    for module, attrs in [
        (builtins, ("eval", "exec", "compile", "breakpoint")),
        (importlib, ("import_module", "reload")),
        (pickle, ("loads", "load", "Unpickler")),
        (_pickle, ("loads", "load", "Unpickler")),
        (os, ("system", "popen", "execv", "execve", "fork", "posix_spawn")),
        (subprocess, ("Popen", "run", "call", "check_output")),
        (ctypes, ("CDLL", "PyDLL")),
        (torch, ("load",)),
        (torch.ops, ("load_library", "import_module")),
        (torch.classes, ("load_library",)),
    ]:
        for attr in attrs:
            if hasattr(module, attr):
                monkeypatch.setattr(module, attr, wire(f"{module.__name__}.{attr}"))
    try:
        yield fired
    finally:
        monkeypatch.undo()


def spec(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    b = es.SpecBuilder()
    b.add(op, args, kwargs)
    return json.loads(es.dumps(b.build()))


def load_guarded(doc: dict[str, Any] | bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[str]]:
    """Decode and load `doc` with the tripwires armed: (executor or the externspec error, fired)."""
    data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    with tripwires(monkeypatch) as fired:
        try:
            result: Any = es.ProxyExecutor(es.loads(data, es.ExternKernelNodes))
        except es.ExternSpecError as exc:
            result = exc
    return result, fired


@pytest.fixture(autouse=True)
def warm() -> None:
    """Load a valid spec once first, so that torch's and externspec's own lazy imports are done and
    only imports a spec could cause are left for the tripwire."""
    es.ProxyExecutor(es.loads(json.dumps(spec(co.kwonly, (X,), {"mode": "b"})), es.ExternKernelNodes))


def marker_command(tmp_path: Path) -> tuple[str, Path]:
    marker = tmp_path / "PWNED"
    return f"touch {marker}", marker


@pytest.mark.parametrize("target", [
    "os.system", "builtins.eval", "os::system", "builtins::eval", "posix::system.default", "subprocess::Popen",
    "__import__('os').system('{cmd}')", "eval::{cmd}", "torch.ops.load_library('/tmp/evil.so')",
    "load_library::evil", "import_module::os", "ops::load_library", "torch::load", "__builtins__::eval.default",
    "aten::__class__.__init__", "higher_order::cond", "pickle::loads", "importlib::import_module",
    "torch._C._jit_get_operation", "call_torchbind",
])
def test_hostile_targets_are_refused_and_nothing_runs(target: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    cmd, marker = marker_command(tmp_path)
    doc = spec(co.tuple_out, (X, X))
    doc["nodes"][0]["node"]["target"] = target.format(cmd=cmd)
    result, fired = load_guarded(doc, monkeypatch)
    assert isinstance(result, es.SpecMismatchError), result
    assert "node 0 `buf0`" in str(result)
    assert re.search(r"not of the form ns::op|no op .* is registered|torchbind", str(result)), str(result)
    assert fired == []
    assert not marker.exists()


class _Payload:
    """Unpickling this runs a shell command: the classic pickle exploit."""

    def __init__(self, cmd: str):
        self.cmd = cmd

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (os.system, (self.cmd,))


def test_pickle_payloads_are_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pickle in a custom-object argument, in metadata, and as a string argument: never unpickled;
    the custom object is refused (this executor loads no custom objects), the rest is plain data."""
    cmd, marker = marker_command(tmp_path)
    blob = base64.b64encode(pickle.dumps(_Payload(cmd))).decode()
    raw = pickle.dumps(_Payload(cmd)).decode("latin-1")

    as_obj = spec(co.tuple_out, (X, X))
    as_obj["nodes"][0]["node"]["inputs"][1]["arg"] = {"as_custom_obj": {"name": blob, "class_fqn": "os.system"}}
    result, fired = load_guarded(as_obj, monkeypatch)
    assert isinstance(result, es.SpecMismatchError)
    assert "argument `y` is `as_custom_obj` in the spec" in str(result)
    assert fired == [] and not marker.exists()

    as_data = spec(co.kwonly, (X,), {"mode": "b"})
    node = as_data["nodes"][0]["node"]
    node["metadata"].update({"pickle": blob, "torch_library_custom_op": raw, "externspec.wrapped_numbers": raw})
    mode = next(i for i in node["inputs"] if i["name"] == "mode")
    mode["arg"] = {"as_string": raw + f"__import__('os').system('{cmd}')"}
    ex, fired = load_guarded(as_data, monkeypatch)
    assert isinstance(ex, es.ProxyExecutor), ex
    assert fired == [] and not marker.exists()


def test_operator_paths_in_arguments_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = spec(co.tuple_out, (X, X))
    doc["nodes"][0]["node"]["inputs"][0]["arg"] = {"as_operator": "builtins.eval"}
    result, fired = load_guarded(doc, monkeypatch)
    assert isinstance(result, es.SpecMismatchError)
    assert "argument `x` is `as_operator` in the spec" in str(result)
    assert fired == []


def test_recorded_op_schema_is_parsed_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cmd, marker = marker_command(tmp_path)
    doc = spec(co.tuple_out, (X, X))
    doc["nodes"][0]["node"]["metadata"]["externspec.op_schema"] = f"__import__('os').system('{cmd}')"
    result, fired = load_guarded(doc, monkeypatch)
    assert isinstance(result, es.SpecMismatchError)
    assert "is not an op schema" in str(result)
    assert fired == [] and not marker.exists()


def test_a_pickle_file_is_a_decode_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cmd, marker = marker_command(tmp_path)
    path = tmp_path / "spec.json"
    path.write_bytes(pickle.dumps(_Payload(cmd)))
    with tripwires(monkeypatch) as fired, pytest.raises(es.DecodeError, match=r"spec.json: \$: Invalid JSON"):
        es.ProxyExecutor(path)
    assert fired == [] and not marker.exists()


def test_documents_with_code_shaped_strings_decode_as_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every model decodes strings as strings: a whole ExportedProgram full of them loads, nothing runs."""
    cmd, marker = marker_command(tmp_path)
    code = f"__import__('os').system('{cmd}')"
    program = json.loads((CONFORMANCE / "valid" / "exported_program_minimal.json")
                         .read_text(encoding="utf-8"))
    # The models build their validators on first use (defer_build, _modelbase.py), and pydantic's build
    # evaluates their annotations with eval: built here, outside the tripwires, or the test failed
    # whenever it was its process's first ExportedProgram (alone, or in a subset such as test-sanitize's).
    es.loads(json.dumps(program), es.ExportedProgram)
    program["graph_module"]["graph"]["nodes"] = [{
        "target": code, "inputs": [{"name": "x", "arg": {"as_operator": code}, "kind": 1}],
        "outputs": [{"as_custom_obj": {"name": code, "class_fqn": "os.system"}}],
        "metadata": {"stack_trace": code, "nn_module_stack": base64.b64encode(pickle.dumps(_Payload(cmd))).decode()},
    }]
    with tripwires(monkeypatch) as fired:
        decoded = es.loads(json.dumps(program), es.ExportedProgram)
    assert decoded.graph_module.graph.nodes[0].target == code
    assert fired == [] and not marker.exists()


def test_tripwires_fire(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard itself works: a real import, eval and unpickle are all caught."""
    with tripwires(monkeypatch) as fired:
        for attempt in (lambda: __import__("this_module_does_not_exist_xyz"), lambda: eval("1"),
                        lambda: pickle.loads(b"N."), lambda: importlib.import_module("json"),
                        lambda: torch.ops.load_library("x.so")):
            with pytest.raises(Tripped):
                attempt()
    assert len(fired) == 5
