"""The command line as a user meets it: startup without torch, no tracebacks on bad input, closed
pipes or write failures, hostile archives, atomic output, stdin/stdout, structured errors.

Everything a user types runs as a real subprocess; the property test drives `main()` in-process
(hundreds of runs) and fails on anything that is not an externspec error.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import externspec as es
from externspec import cli, wire
from externspec.cli.commands import _output
from externspec.errors import problem
from tests.support.cli import command, externspec_bytes
from tests.support.paths import REPO

# Makes `import torch` fail as it does where torch is not installed.
NO_TORCH = "import sys; sys.modules['torch'] = None; "

NODE = {"target": "aten::add.Tensor",
        "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}, "kind": 1},
                   {"name": "other", "arg": {"as_tensor": {"name": "y"}}, "kind": 1}],
        "outputs": [{"as_tensor": {"name": "buf0"}}], "metadata": {}}
SPEC = {"nodes": [{"name": "buf0", "node": NODE}]}


def python(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, *args], capture_output=True, input=stdin, cwd=REPO, timeout=300)


def no_traceback(r: subprocess.CompletedProcess[bytes]) -> str:
    err = r.stderr.decode()
    assert "Traceback" not in err and cli.INTERNAL_ERROR not in err, err
    return err


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(SPEC))
    return path


# --- startup -------------------------------------------------------------------------------------

def test_import_and_json_commands_do_not_import_torch(spec_file: Path, tmp_path: Path) -> None:
    code = ("import sys, contextlib, io\n"
            "import externspec\n"
            "print('torch' in sys.modules)\n"
            "from externspec.cli import main\n"
            "for argv in (['validate', sys.argv[1]], ['inspect', '--no-slots', sys.argv[1]],\n"
            "             ['convert', sys.argv[1], sys.argv[2]]):\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        assert main(argv) == 0, argv\n"
            "print('torch' in sys.modules)\n")
    r = python("-c", code, str(spec_file), str(tmp_path / "out.bin"))
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode().split() == ["False", "False"]


def test_a_command_imports_only_its_own_module(spec_file: Path) -> None:
    code = ("import sys, contextlib, io\n"
            "from externspec.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['--color', 'never', 'validate', sys.argv[1]]) == 0\n"
            "print(sorted(m for m in sys.modules if m.startswith('externspec.cli.commands.') and '._' not in m))\n"
            "print('externspec.abi' in sys.modules, 'subprocess' in sys.modules)\n")
    r = python("-c", code, str(spec_file))
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode().splitlines() == ["['externspec.cli.commands.validate']", "False False"]


def test_every_command_is_listed_under_its_own_name() -> None:
    import importlib

    for name, module_name in cli.SUBCOMMANDS.items():
        assert name == importlib.import_module(module_name).NAME
    top = externspec_bytes("--help")
    assert top.returncode == 0
    assert all(name in top.stdout.decode() for name in cli.SUBCOMMANDS)
    wrong = externspec_bytes("--color", "never", "valdate", "x.json")
    assert wrong.returncode == 2
    assert "invalid choice: 'valdate'" in no_traceback(wrong)


def test_without_torch_the_torch_parts_say_so() -> None:
    code = NO_TORCH + (
        "import externspec as es\n"
        "from externspec import *\n"
        "assert 'SpecBuilder' not in dir() and Argument(as_int=3).value == 3\n"
        "for name in ('SpecBuilder', 'ProxyExecutor', 'CallSite', 'cpp'):\n"
        "    try:\n"
        "        getattr(es, name)\n"
        "    except ImportError as e:\n"
        "        print(name, e.name, e)\n")
    r = python("-c", code)
    assert r.returncode == 0, r.stderr.decode()
    lines = r.stdout.decode().splitlines()
    assert [line.split()[:2] for line in lines] == [["SpecBuilder", "torch"], ["ProxyExecutor", "torch"],
                                                    ["CallSite", "torch"], ["cpp", "torch"]]
    assert all("needs torch, which is not installed" in line for line in lines)


def test_with_torch_the_lazy_names_are_the_real_ones() -> None:
    from externspec.abi import exporter, proxy_executor

    assert es.SpecBuilder is exporter.SpecBuilder and es.ProxyExecutor is proxy_executor.ProxyExecutor
    assert {"SpecBuilder", "ProxyExecutor", "CallSite", "cpp"} <= set(dir(es))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        es.nope  # noqa: B018


def test_check_spec_without_torch(spec_file: Path) -> None:
    r = python("-c", NO_TORCH + "from externspec.cli import main; raise SystemExit(main(sys.argv[1:]))",
               "check-spec", str(spec_file))
    assert r.returncode == 2  # a missing optional dependency is a usage error
    assert "needs torch, which is not installed" in no_traceback(r)


@pytest.mark.parametrize("output_format", ["json", "github"])
def test_check_spec_without_torch_still_reports_every_file(spec_file: Path, output_format: str) -> None:
    r = python("-c", NO_TORCH + "from externspec.cli import main; raise SystemExit(main(sys.argv[1:]))",
               "check-spec", "--format", output_format, str(spec_file), str(spec_file))
    assert r.returncode == 2
    assert "needs torch, which is not installed" in no_traceback(r)
    out = r.stdout.decode()
    if output_format == "json":
        results = json.loads(out)
        assert [(x["file"], x["ok"], [e["kind"] for e in x["errors"]]) for x in results] == [
            (str(spec_file), False, ["setup"])] * 2
    else:
        assert out.splitlines() == [f"::error file={spec_file},title=externspec::$: needs torch, which is not "
                                    "installed (pip install 'externspec[torch]')"] * 2


def test_version_flag() -> None:
    r = externspec_bytes("--version")
    assert r.returncode == 0 and r.stdout.decode().strip() == f"externspec {es.__version__}"


# --- no tracebacks ---------------------------------------------------------------------------------

def test_closed_pipe_ends_quietly(spec_file: Path) -> None:
    """`externspec validate f*.json | head -1`: the reader closes the pipe after one line."""
    proc = subprocess.Popen(command("validate", *[str(spec_file)] * 2000),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"OK")
    proc.stdout.close()
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 1
    assert "Traceback" not in err and err == "", err


def test_cpp_include_unknown_backend_and_no_warning() -> None:
    r = python("-W", "error", "-m", "externspec.cpp_include", "--cflags", "rapidjson")
    assert r.returncode == 2
    assert "argument backend: invalid choice: 'rapidjson' (choose from 'nlohmann', 'simdjson')" in no_traceback(r)
    r = python("-W", "error", "-m", "externspec.cpp_include", "--include")
    assert r.returncode == 0 and r.stderr == b"", r.stderr.decode()  # no RuntimeWarning from runpy


def test_check_spec_loads_a_python_file_by_path(spec_file: Path, tmp_path: Path) -> None:
    ops = tmp_path / "ops.py"
    ops.write_text("import torch\n")
    r = externspec_bytes("check-spec", str(spec_file), "--load", "./ops.py", cwd=tmp_path)
    assert r.returncode == 0, no_traceback(r)
    r = externspec_bytes("check-spec", str(spec_file), "--import", "./nope.py", cwd=tmp_path)
    assert r.returncode == 1
    assert "--load ./nope.py: FileNotFoundError" in no_traceback(r)


def test_generate_outside_a_checkout_and_compat_of_missing_files(tmp_path: Path) -> None:
    r = externspec_bytes("generate", "--check", cwd=tmp_path)
    assert r.returncode == 1
    assert "schema/externspec.thrift: no such IDL file" in no_traceback(r)
    r = externspec_bytes("compat", str(tmp_path / "old.thrift"), str(tmp_path / "new.thrift"))
    assert r.returncode == 1
    assert f"externspec compat: {tmp_path / 'old.thrift'}: cannot read: No such file" in no_traceback(r)


@pytest.mark.parametrize("make_out", ["missing_dir", "is_dir"])
@pytest.mark.parametrize("command", ["convert", "upgrade"])
def test_write_failures_are_messages(spec_file: Path, tmp_path: Path, make_out: str, command: str) -> None:
    out = tmp_path / "nope" / "out.json"
    if make_out == "is_dir":
        out = tmp_path / "out.json"
        out.mkdir()
    r = externspec_bytes(command, str(spec_file), str(out))
    assert r.returncode == 1
    expect = "it is a directory" if make_out == "is_dir" else "does not exist"
    assert f"externspec {command}: cannot write {out}: " in no_traceback(r) and expect in r.stderr.decode()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["spec.json", *(["out.json"] if make_out == "is_dir"
                                                                               else [])])


# --- atomic output -------------------------------------------------------------------------------

def test_upgrade_does_not_follow_a_planted_temp_file(spec_file: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    out = tmp_path / "out.json"
    os.symlink(victim, tmp_path / "out.json.tmp")  # the name the old code wrote through
    r = externspec_bytes("upgrade", str(spec_file), str(out))
    assert r.returncode == 0, no_traceback(r)
    assert victim.read_text() == "precious"
    assert es.loads(out.read_bytes(), es.ExternKernelNodes) == es.loads(spec_file.read_bytes(), es.ExternKernelNodes)
    assert not out.is_symlink()


def test_a_failed_rename_leaves_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out.bin"
    out.write_bytes(b"old")

    def fail(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(_output.OutputError, match=r"cannot write .*out\.bin: No space left on device"):
        _output.write_output(str(out), b"new")
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"] and out.read_bytes() == b"old"


def test_output_keeps_the_permissions_open_would_give(spec_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.bin"
    assert externspec_bytes("convert", str(spec_file), str(out)).returncode == 0
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


# --- stdin and stdout ----------------------------------------------------------------------------

def test_stdin_and_stdout(spec_file: Path) -> None:
    r = externspec_bytes("validate", "-", stdin=spec_file.read_bytes())
    assert r.returncode == 0 and r.stdout.decode().startswith("OK       -  (ExternKernelNodes"), r
    r = externspec_bytes("convert", str(spec_file), "-")
    assert r.returncode == 0
    assert es.loads(r.stdout, es.ExternKernelNodes).nodes[0].node.target == "aten::add.Tensor"
    r = externspec_bytes("convert", "-", "-", "--to", "compact", stdin=spec_file.read_bytes())
    assert r.returncode == 0 and r.stdout[:1] != b"{"


# --- hostile files -------------------------------------------------------------------------------

WRAPPER = "pkg/data/aotinductor/model/m.wrapper.json"


def _zip(path: Path, data: bytes, *, flag: int = 0, method: int | None = None) -> Path:
    """A one-member archive whose headers (local and central) are patched afterwards: `flag` ORs the
    general-purpose flags (1: encrypted), `method` sets the compression method (zipfile writes
    neither for a member it cannot read back)."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(WRAPPER, data)
    raw = bytearray(path.read_bytes())
    central = raw.rindex(b"PK\x01\x02")
    for flags_at, method_at in ((6, 8), (central + 8, central + 10)):
        raw[flags_at:flags_at + 2] = struct.pack("<H", struct.unpack_from("<H", raw, flags_at)[0] | flag)
        if method is not None:
            raw[method_at:method_at + 2] = struct.pack("<H", method)
    path.write_bytes(bytes(raw))
    return path


def hostile_files(d: Path) -> dict[str, Path]:
    spec = json.dumps(SPEC).encode()
    files = {
        "not_zip.pt2": b"PK\x03\x04 this is not an archive",
        "bad_utf8.json": b'{"nodes": [{"name": "\xff\xfe", "node": {}}]}',
        "huge_int.json": b'{"nodes": [], "schema_version": {"major": ' + b"9" * 5000 + b', "minor": 0}}',
        "huge_int_unknown_first_key.json": b'{"x": ' + b"9" * 5000 + b"}",
        "not_json.json": b"{nodes",
        "array.json": b"[1, 2]",
        "thrift.bin": b"\x0f\x00\x0a\x0c\x7f\xff\xff\xff",
    }
    out = {}
    for name, data in files.items():
        (d / name).write_bytes(data)
        out[name] = d / name
    out["encrypted.pt2"] = _zip(d / "encrypted.pt2", spec, flag=0x1)
    out["unknown_compression.pt2"] = _zip(d / "unknown_compression.pt2", spec, method=99)
    out["corrupt_deflate.pt2"] = _zip(d / "corrupt_deflate.pt2", spec, method=zipfile.ZIP_DEFLATED)
    return out


def test_validate_reports_every_hostile_file_and_goes_on(spec_file: Path, tmp_path: Path) -> None:
    hostile = hostile_files(tmp_path)
    paths = [str(p) for p in hostile.values()]
    r = externspec_bytes("validate", *paths, str(spec_file))
    no_traceback(r)
    out = r.stdout.decode()
    assert r.returncode == 1
    assert f"OK       {spec_file}" in out  # the batch went on to the last file
    assert f"{len(hostile)} invalid ({len(hostile) + 1} files)" in out
    for name in hostile:
        assert f"INVALID  {tmp_path / name}" in out, name
    assert "the member is encrypted" in out and "compression method 99 is not supported" in out


@pytest.mark.parametrize("command", ["inspect", "convert"])
def test_other_commands_on_hostile_files(tmp_path: Path, command: str) -> None:
    for name, path in hostile_files(tmp_path).items():
        args = [command, str(path)] + ([str(tmp_path / "out.json")] if command == "convert" else [])
        r = externspec_bytes(*args)
        assert r.returncode == 1, (name, r)
        assert no_traceback(r).startswith(f"externspec {command}: "), (name, r.stderr)


def test_check_spec_on_hostile_files(tmp_path: Path) -> None:
    """One process (it imports torch) for every file: each gets its error line, none stops the rest."""
    hostile = hostile_files(tmp_path)
    r = externspec_bytes("check-spec", *map(str, hostile.values()))
    assert r.returncode == 1
    lines = no_traceback(r).splitlines()
    for path in hostile.values():
        assert any(line.startswith(f"externspec check-spec: {path}") for line in lines), (path, lines)


def test_sizes_are_checked_before_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    big = json.dumps({**SPEC, "pad": "x" * 4000}).encode()
    monkeypatch.setattr(wire, "MAX_JSON_BYTES", 1000)
    plain = tmp_path / "big.json"
    plain.write_bytes(big)
    archive = _zip(tmp_path / "big.pt2", big)
    assert cli.main(["validate", str(plain), str(archive)]) == 1
    out = capsys.readouterr().out
    assert f"document of {len(big)} bytes exceeds the size limit of 1000 bytes" in out, out  # the file's size
    assert f"{len(big)} bytes, over the limit of 1000 bytes (externspec.wire.MAX_JSON_BYTES)" in out, out  # its header


def test_a_member_whose_header_lies_is_read_no_further_than_it_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    archive = _zip(tmp_path / "lies.pt2", json.dumps({**SPEC, "pad": "x" * 4000}).encode())
    original = zipfile.ZipFile.infolist

    def small_sizes(self: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
        infos = original(self)
        for info in infos:
            info.file_size = 10  # what a hostile central directory may claim
        return infos

    monkeypatch.setattr(zipfile.ZipFile, "infolist", small_sizes)
    monkeypatch.setattr(wire, "MAX_JSON_BYTES", 1000)
    assert cli.main(["validate", str(archive)]) == 1  # the size check passes: 10 bytes are read, then CRC
    assert "cannot read the archive member: Bad CRC-32" in capsys.readouterr().out


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["nodes", "node", "name", "target", "inputs", "arg", "schema_version", "major", "config"]),
        inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.one_of(st.binary(max_size=64), JSONISH.map(lambda v: json.dumps(v).encode())),
       name=st.sampled_from(["f.json", "f.bin", "f.compact", "f.pt2", "f"]),
       command=st.sampled_from(["validate", "inspect", "convert"]))
def test_no_command_fails_outside_its_errors(tmp_path: Path, content: bytes, name: str, command: str) -> None:
    """The whole class: any bytes, under any name, through any reading command, exits 0 or 1 with
    externspec's own messages, never an exception from the standard library or pydantic."""
    path = tmp_path / name
    path.write_bytes(content)
    args = [command, str(path)] + ([str(tmp_path / "out.json")] if command == "convert" else [])
    args += ["--no-slots"] if command == "inspect" else []
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = cli.main(args)
    assert rc in (0, 1) and cli.INTERNAL_ERROR not in err.getvalue(), err.getvalue()


# --- structured errors ---------------------------------------------------------------------------

def test_decode_error_lists_every_problem_with_its_kind() -> None:
    # A list stops at its first bad element (inputs[1] and outputs[1] are not reported); fields go on.
    doc = {"nodes": [{"name": 1, "node": {"target": "t", "inputs": [{"name": "a", "arg": {}},
                                                                  {"name": "b", "arg": {"as_x": 1}}],
                                          "outputs": [{"as_x": 1}, {}]}}]}
    with pytest.raises(es.DecodeError) as info:
        es.loads(json.dumps(doc), es.ExternKernelNodes)
    e = info.value
    kinds = [(d["kind"], d["path"]) for d in e.errors()]
    assert kinds == [("type", "$.nodes[0].name"), ("union", "$.nodes[0].node.inputs[0].arg"),
                     ("unknown_key", "$.nodes[0].node.outputs[0]"), ("missing", "$.nodes[0].node")]
    assert e.errors()[0]["loc"] == ("nodes", 0, "name")
    assert e.error_count() == len(e.errors()) == len(str(e).splitlines())
    for d in e.errors():
        assert f"{d['path']}: {d['message']}" in str(e)


def test_str_of_a_decode_error_stops_at_the_limit() -> None:
    many = [problem("type", f"$.nodes[{i}].name", "expected `str`, got `int`") for i in range(100)]
    text = str(es.DecodeError(many, source="f.json"))
    assert text.splitlines()[0] == "f.json: $.nodes[0].name: expected `str`, got `int` (and 99 more)"
    assert len(text.splitlines()) == 21 and text.endswith("... 80 more not shown")
    assert es.DecodeError(many).errors()[99]["kind"] == "type"
