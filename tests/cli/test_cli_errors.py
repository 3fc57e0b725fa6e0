"""One wording per failure across the commands that read documents, through real subprocesses:
`validate`, `inspect`, `convert`, `upgrade` and `check-spec` say the same thing, in the same
words, for the same bad input (and `convert` and `upgrade` for the same unwritable OUT), each with
exit code 1 and no traceback. `validate` prints the file on its own line and the message under it;
the others print `externspec COMMAND: FILE: message` on stderr."""

from __future__ import annotations

import os
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from externspec import wire
from tests.support import cli

LIMIT = wire.MAX_JSON_BYTES
SPEC = b'{"nodes": []}'
KINDS = "ExternKernelNodes, ExportedProgram, ExternKernelNode, Node, PayloadConfig"
MANY_FILES = ("validate", "inspect", "check-spec")  # one run over every failing file
ONE_FILE = ("convert", "upgrade")


def _unreadable(d: Path) -> Path:
    path = d / "unreadable.json"
    path.write_bytes(SPEC)
    path.chmod(0)
    if not os.access(path, os.R_OK):
        return path
    # root reads a mode-000 file; a write-only procfs file is unreadable even to root
    proc = Path("/proc/sys/vm/compact_memory")
    try:
        proc.open("rb").close()
    except PermissionError:
        return proc
    except OSError:
        pass
    pytest.skip("no file this user cannot read")


def _oversized(d: Path) -> Path:
    path = d / "big.json"
    with path.open("wb") as f:
        f.truncate(LIMIT + 1)  # sparse: refused by its size before anything is read
    return path


def _write(name: str, data: bytes) -> Callable[[Path], Path]:
    def make(d: Path) -> Path:
        (d / name).write_bytes(data)
        return d / name
    return make


def _archive(name: str, member: str, data: bytes) -> Callable[[Path], Path]:
    def make(d: Path) -> Path:
        with zipfile.ZipFile(d / name, "w") as z:
            z.writestr(member, data)
        return d / name
    return make


MEMBER = "m/data/aotinductor/model/x.wrapper.json"
# failure -> (make the input in a directory, what the command says about it, {path} being the input)
FAILURES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "JSON syntax error": (_write("bad.json", b'{"nodes": [}'),
                          "{path}: $: Invalid JSON: expected value at line 1 column 12"),
    "file not found": (lambda d: d / "missing.json", "{path}: cannot read: No such file or directory"),
    "not a directory": (lambda d: _write("plain.json", SPEC)(d) / "x.json", "{path}: cannot read: Not a directory"),
    "a directory": (lambda d: d, "{path}: cannot read: Is a directory"),
    "permission denied": (_unreadable, "{path}: cannot read: Permission denied"),
    "oversized input": (_oversized, f"{{path}}: document of {LIMIT + 1} bytes exceeds the size limit of {LIMIT} "
                                    f"bytes (externspec.wire.MAX_JSON_BYTES)"),
    "unknown document kind": (_write("odd.json", b'{"foo": 1}'), "{path}: cannot tell the document type from its "
                              f"top-level keys (foo); pass --type ({KINDS})"),
    "not a zip archive": (_write("cut.pt2", b"PK\x03\x04 cut short"),
                          "{path}: not a zip archive (a .pt2 file is one): truncated or not a .pt2; a package is "
                          "the file torch._inductor.aoti_compile_and_package writes"),
    "no document in the archive": (_archive("none.pt2", "m/readme.txt", b"hello"),
                                   "{path}: no externspec document in this archive (looked for "
                                   "*/data/aotinductor/*/*.wrapper.json, */models/*.json, "
                                   "*/data/weights/*_config.json, */data/constants/*_config.json): a zip "
                                   "archive that is not an AOTInductor package (it has no "
                                   "*/data/aotinductor/*/*.wrapper.so); a package is the file "
                                   "torch._inductor.aoti_compile_and_package writes"),
    "bad JSON member": (_archive("member.pt2", MEMBER, b'{"nodes": [}'),
                        f"{{path}}:{MEMBER}: $: Invalid JSON: expected value at line 1 column 12"),
}
# check-spec reads every JSON file as an extern-kernel spec (it has no other kind and no --type):
# a document of another shape is a spec with problems, reported as such.
NOT_FOR = {("check-spec", "unknown document kind")}


def externspec(*args: str) -> subprocess.CompletedProcess[str]:
    return cli.externspec("--color", "never", *args)


def _messages(command: str, r: subprocess.CompletedProcess[str], paths: list[str]) -> list[str]:
    """Each failing file's `FILE: message` line, from the command's text output."""
    assert r.returncode == 1, (command, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    if command == "validate":
        lines = r.stdout.splitlines()
        found = []
        for path in paths:  # `INVALID  LABEL` or `INVALID  LABEL  (type, n errors)`, the message under it
            i = next(i for i, line in enumerate(lines) if line.startswith(f"INVALID  {path}"))
            label = lines[i].removeprefix("INVALID  ").split("  ")[0]
            found.append(f"{label}: {lines[i + 1].strip()}")
        return found
    prefix = f"externspec {command}: "
    lines = r.stderr.splitlines()
    assert len(lines) == len(paths) and all(line.startswith(prefix) for line in lines), lines
    return [line.removeprefix(prefix) for line in lines]


@pytest.fixture(scope="module")
def messages(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """The input of each failure, and (command, failure) -> the `FILE: message` the command printed."""
    d = tmp_path_factory.mktemp("failures")
    inputs: dict[str, str] = {}
    for failure, (make, _) in FAILURES.items():
        sub = d / failure.replace(" ", "_")
        sub.mkdir()
        try:
            inputs[failure] = str(make(sub))
        except pytest.skip.Exception:
            continue
    out: dict[tuple[str, str], str] = {}
    for command in MANY_FILES:
        chosen = [f for f in inputs if (command, f) not in NOT_FOR]
        args = ["--no-slots"] if command == "inspect" else []
        paths = [inputs[f] for f in chosen]
        r = externspec(command, *args, *paths)
        out.update(zip(((command, f) for f in chosen), _messages(command, r, paths), strict=True))
    for command in ONE_FILE:
        for failure, path in inputs.items():
            r = externspec(command, path, str(d / "out.json"))
            (out[(command, failure)],) = _messages(command, r, [path])
            assert not (d / "out.json").exists()
    return inputs, out


@pytest.mark.parametrize("failure", list(FAILURES))
def test_one_wording_per_failure(failure: str, messages: tuple[dict[str, str], dict[tuple[str, str], str]]) -> None:
    inputs, printed = messages
    if failure not in inputs:
        pytest.skip(f"cannot make the {failure!r} input here")
    got = {command: text for (command, f), text in printed.items() if f == failure}
    assert set(got) == {c for c in (*MANY_FILES, *ONE_FILE) if (c, failure) not in NOT_FOR}
    assert set(got.values()) == {FAILURES[failure][1].format(path=inputs[failure])}, got


def test_check_spec_reads_any_json_as_a_spec(messages: tuple[dict[str, str], dict[tuple[str, str], str]],
                                             tmp_path: Path) -> None:
    path = _write("odd.json", b'{"foo": 1}')(tmp_path)
    r = externspec("check-spec", str(path))
    assert _messages("check-spec", r, [str(path)]) == [f"{path}: $: missing required field `nodes`"]


def _directory(d: Path) -> Path:
    (d / "out.json").mkdir()
    return d / "out.json"


@pytest.mark.parametrize("make_out, reason", [
    (lambda d: d / "no_such_dir" / "out.json", "directory {parent} does not exist"),
    (lambda d: _write("file", b"")(d) / "out.json", "{parent} is not a directory"),
    (_directory, "it is a directory"),
], ids=["missing directory", "not a directory", "a directory"])
def test_one_wording_per_output_failure(make_out: Callable[[Path], Path], reason: str, tmp_path: Path) -> None:
    src = tmp_path / "in.json"
    src.write_bytes(SPEC)
    out = make_out(tmp_path)
    want = f"cannot write {out}: {reason.format(parent=out.parent)}"
    for command in ONE_FILE:
        r = externspec(command, str(src), str(out))
        assert _messages(command, r, [str(out)]) == [want], command
