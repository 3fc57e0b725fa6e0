"""The `externspec` command through real subprocesses, on real torch artifacts.

Artifacts: a torch.export archive (torch.export.save) and an AOTInductor package
(aoti_compile_and_package) of a model with two torch.library custom ops, compiled once and cached
under .cache/ by tests/support/artifacts.py.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import thriftpy2
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.utils import deserialize

import externspec as es
from tests.support import artifacts as support
from tests.support.cli import command, externspec, externspec_bytes
from tests.support.paths import IDL, PAYLOADS, REPO
from tests.support.versions import CURRENT_TEXT

OPS = REPO / "tests/support/artifact_ops.py"  # registers the custom ops in the `inspect --load` subprocess
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@pytest.fixture(scope="session")
def artifacts() -> dict[str, Path]:
    """The shared cached artifacts (tests/support/artifacts.py): a torch.export archive and an
    AOTInductor package of the same model with two torch.library custom ops."""
    return {"ep": support.exported_program("custom_ops"), "aoti": support.aoti_package()}


def member(archive: Path, suffix: str) -> tuple[str, bytes]:
    with zipfile.ZipFile(archive) as z:
        name = next(n for n in z.namelist() if n.endswith(suffix))
        return name, z.read(name)


@pytest.fixture(scope="session")
def documents(artifacts, tmp_path_factory) -> dict[str, Path]:
    """The JSON members of the archives as plain files."""
    d = tmp_path_factory.mktemp("docs")
    (d / "wrapper.json").write_bytes(member(artifacts["aoti"], ".wrapper.json")[1])
    (d / "model.json").write_bytes(member(artifacts["ep"], "models/model.json")[1])
    return {"wrapper": d / "wrapper.json", "program": d / "model.json"}


def rewrite_member(src: Path, dst: Path, suffix: str, edit) -> None:
    """Copy a .pt2 archive, passing one member's bytes through `edit`."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            zout.writestr(info, edit(data) if info.filename.endswith(suffix) else data)


# --- version, generate, usage ------------------------------------------------------------------------


def test_version():
    r = externspec("version")
    assert r.returncode == 0, r.stderr
    assert re.search(rf"^schema version\s+{re.escape(CURRENT_TEXT)}$", r.stdout, re.M)
    assert f"sha256:{es.IDL_CHECKSUM}" in r.stdout
    info = json.loads(externspec("version", "--json").stdout)
    assert info == {"externspec": es.__version__, "schema_version": CURRENT_TEXT, "idl_checksum": es.IDL_CHECKSUM,
                    "torch_export_schema_major": 8}


def test_installed_entry_point_runs():
    exe = Path(sys.executable).with_name("externspec")
    r = subprocess.run([str(exe), "version", "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and json.loads(r.stdout)["schema_version"] == CURRENT_TEXT, r.stderr


def test_usage_errors_exit_2():
    assert externspec().returncode == 2
    r = externspec("validate")
    assert r.returncode == 2 and "the following arguments are required: FILE" in r.stderr
    assert externspec("inspect", "x.json", "--bogus").returncode == 2
    h = externspec("convert", "--help")
    assert h.returncode == 0 and h.stdout.startswith("usage: externspec convert")


@pytest.mark.parametrize("sub", ["validate", "inspect", "convert", "version", "generate"])
def test_every_subcommand_has_help(sub, capsys):
    from externspec import cli

    with pytest.raises(SystemExit) as exit_:
        cli.main([sub, "--help"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: externspec {sub}")


def test_generate_check_and_stale_root(tmp_path):
    r = externspec("generate", "--check")
    assert r.returncode == 0, r.stderr
    assert "generated code is current" in r.stdout
    r = externspec("generate", "--check", "--idl", str(IDL), "--root", str(tmp_path))
    assert r.returncode == 1
    assert "models.py: missing" in r.stderr and "run `make generate`" in r.stderr
    r = externspec("generate", "--idl", str(IDL), "--root", str(tmp_path))
    assert r.returncode == 0 and "wrote" in r.stdout
    assert (tmp_path / "python/externspec/_generated/models.py").read_text() == (
        REPO / "python/externspec/_generated/models.py").read_text()


# --- validate ------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_validate_real_artifacts(artifacts, documents):
    r = externspec("validate", str(artifacts["ep"]), str(artifacts["aoti"]), str(documents["wrapper"]),
            str(documents["program"]))
    assert r.returncode == 0, r.stdout + r.stderr
    wrapper_name = member(artifacts["aoti"], ".wrapper.json")[0]
    assert f"OK       {artifacts['aoti']}:{wrapper_name}  (ExternKernelNodes, unversioned" in r.stdout
    assert re.search(r"OK .*\.pt2:export_custom_ops/models/model\.json  \(ExportedProgram, torch export schema "
                     r"8\.\d+, \d+ nodes\)", r.stdout)
    assert re.search(r"OK .*model_weights_config\.json  \(PayloadConfig, \d+ entr", r.stdout)
    assert r.stdout.rstrip().endswith("all valid (4 files)")
    assert "\x1b[" not in r.stdout  # not a TTY: no colour


@pytest.mark.slow
def test_validate_bad_files(artifacts, documents, tmp_path):
    wrapper = json.loads(documents["wrapper"].read_text())
    cases: dict[str, tuple[bytes, str]] = {}

    def case(name: str, data: bytes, expected: str) -> None:
        cases[name] = (data, expected)

    case("truncated.json", documents["wrapper"].read_bytes()[:150], r"\$: Invalid JSON: EOF while .* column 150")
    case("array.json", b"[1, 2]", r"expected a JSON object at the top level, got an array")
    case("unknown.json", b'{"hello": 1}', r"cannot tell the document type from its top-level keys \(hello\)")
    case("newer_major.json", json.dumps({**wrapper, "schema_version": {"major": 2, "minor": 0}}).encode(),
         r"\$\.schema_version: document schema 2\.0 has major version 2; this reader \(schema "
         + re.escape(CURRENT_TEXT) + r"\)")
    program = json.loads(documents["program"].read_text())
    case("newer_torch.json", json.dumps({**program, "schema_version": {"major": 9, "minor": 0}}).encode(),
         r"torch export schema 9\.0 is not major 8")
    bad_arg = json.loads(documents["wrapper"].read_text())
    bad_arg["nodes"][1]["node"]["inputs"][2]["arg"] = {"as_ints": ["3", 5]}
    case("bad_arg.json", json.dumps(bad_arg).encode(), r"\$\.nodes\[1\]\.node\.inputs\[2\]\.arg\.as_ints\[0\]: "
                                                       r"expected `int`, got `str`")
    case("truncated.pt2", artifacts["aoti"].read_bytes()[:4000], r"not a zip archive")
    for name, (data, _) in cases.items():
        (tmp_path / name).write_bytes(data)
    rewrite_member(artifacts["aoti"], tmp_path / "newer.pt2", ".wrapper.json",
                   lambda b: json.dumps({**json.loads(b), "schema_version": {"major": 3, "minor": 1}}).encode())
    cases["newer.pt2"] = (b"", r"\.wrapper\.json\n  \$\.schema_version: document schema 3\.1 has major version 3")

    for name, (_, expected) in cases.items():
        r = externspec("validate", str(tmp_path / name))
        assert r.returncode == 1, (name, r.stdout, r.stderr)
        assert r.stdout.startswith("INVALID"), (name, r.stdout)
        assert re.search(expected, r.stdout), (name, r.stdout)
        assert r.stderr == "" and "Traceback" not in r.stdout

    # A batch: every file is reported, and the exit code says one failed.
    r = externspec("validate", str(documents["wrapper"]), str(tmp_path / "bad_arg.json"),
                   str(tmp_path / "missing.json"))
    assert r.returncode == 1
    assert r.stdout.count("INVALID") == 2 and "cannot read: No such file or directory" in r.stdout
    assert r.stdout.rstrip().endswith("2 invalid (3 files)")


def test_validate_detects_every_document_type_of_the_released_payloads():
    payloads = PAYLOADS / "v1.0"
    index = json.loads((payloads / "index.json").read_text())
    r = externspec("validate", *(str(payloads / e["path"]) for e in index))
    assert r.returncode == 0, r.stdout
    for e in index:
        assert re.search(rf"^OK +{re.escape(str(payloads / e['path']))}  \({e['type']}\b", r.stdout, re.M), e


@pytest.mark.slow
def test_validate_strict_rejects_unknown_keys(documents, tmp_path):
    doc = json.loads(documents["wrapper"].read_text())
    doc["nodes"][0]["node"]["future_key"] = 1
    path = tmp_path / "extra.json"
    path.write_text(json.dumps(doc))
    assert externspec("validate", str(path)).returncode == 0  # torch-written: ignored, as torch does
    r = externspec("validate", "--strict", str(path))
    assert r.returncode == 1
    assert "$.nodes[0].node: unknown key `future_key`" in r.stdout


def test_validate_reports_every_error(tmp_path):
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"nodes": [{"name": 1, "node": {"target": "t", "inputs": [], "outputs": [{}],
                                                               "metadata": {}}}]}))
    r = externspec("validate", str(path))
    assert r.returncode == 1
    assert "(ExternKernelNodes, 2 errors)" in r.stdout
    assert "  $.nodes[0].name: expected `str`, got `int`" in r.stdout
    assert "  $.nodes[0].node.outputs[0]: expected exactly one member of `Argument`, got 0" in r.stdout


# --- inspect -------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_inspect_aoti_package_counts_slots(artifacts):
    r = externspec("inspect", str(artifacts["aoti"]), "--load", str(OPS))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[1] == "ExternKernelNodes, unversioned (torch-written, read as schema 1.0), 2 nodes"
    header = lines[3]
    assert header.split() == ["IDX", "TARGET", "ARGUMENT", "MEMBER", "VALUE", "SLOTS"]
    col = {name: header.index(name) for name in ("TARGET", "ARGUMENT", "MEMBER", "VALUE", "SLOTS")}
    rows = {line[col["ARGUMENT"]:col["MEMBER"]].strip(): line for line in lines[4:11]}
    # Aligned columns: each cell starts under its header.
    assert rows["alpha"][col["MEMBER"]:].split() == ["as_float", "2.5", "static"]
    assert rows["dims"][col["VALUE"]:col["SLOTS"]].strip() == "[0, 1]"
    assert rows["dims"][col["SLOTS"]:] == "2 ints"
    assert rows["bias"][col["SLOTS"]:] == "tensor"
    # scale_add(x, y, float alpha, int[] dims, str mode, Tensor? bias) -> Tensor
    assert lines[5][col["TARGET"]:col["ARGUMENT"]].strip() == "static 2 · ints 2+0 · tensors 3+1"

    (result,) = json.loads(externspec("inspect", str(artifacts["aoti"]), "--load", str(OPS), "--json").stdout)
    assert result["ok"] is True and result["errors"] == []
    (data,) = result["documents"]
    assert data["schema_version"] is None
    scale_add, cast_sum = data["nodes"]
    assert scale_add["target"] == "externspec_art::scale_add"
    # Values as the wire writes them (numbers as numbers), `text` as the table shows them.
    assert [(a["name"], a["member"], a["value"], a["text"], a["slots"]) for a in scale_add["inputs"]] == [
        ("x", "as_tensor", {"name": "arg0_1"}, "arg0_1", {"kind": "tensor", "count": 1}),
        ("y", "as_tensor", {"name": "arg1_1"}, "arg1_1", {"kind": "tensor", "count": 1}),
        ("alpha", "as_float", 2.5, "2.5", {"kind": "static", "count": 0}),
        ("dims", "as_ints", [0, 1], "[0, 1]", {"kind": "int", "count": 2}),
        ("mode", "as_string", "mean", '"mean"', {"kind": "static", "count": 0}),
        ("bias", "as_tensor", {"name": "arg2_1"}, "arg2_1", {"kind": "tensor", "count": 1})]
    # cast_sum(x, ScalarType dtype, Tensor[] others, float scale) -> Tensor
    assert cast_sum["slots"] == {"static": 2, "int_inputs": 0, "tensor_inputs": 3, "int_outputs": 0,
                                 "tensor_outputs": 1}
    assert cast_sum["inputs"][1] == {"name": "dtype", "member": "as_scalar_type", "value": es.ScalarType.DOUBLE.value,
                                     "text": "ScalarType.DOUBLE", "slots": {"kind": "static", "count": 0}}
    assert cast_sum["inputs"][2]["slots"] == {"kind": "tensor", "count": 2}


@pytest.mark.slow
def test_inspect_export_archives_without_the_custom_ops():
    """Ops torch does not know in this process get no counts rather than wrong ones; aten ops do."""
    (result,) = json.loads(externspec("inspect", str(support.exported_program("custom_ops")), "--json").stdout)
    (custom,) = result["documents"]
    assert re.fullmatch(r"8\.\d+", custom["schema_version"])
    assert [n["slots"] for n in custom["nodes"]] == [None, None]
    r = externspec("inspect", str(support.exported_program("mlp")))
    assert r.returncode == 0, r.stderr
    assert re.search(r"^ExportedProgram, torch export schema 8\.\d+, 4 nodes$", r.stdout, re.M)
    # aten.batch_norm: input and 4 optional tensors given; training, momentum, eps, cudnn_enabled static.
    assert "static 4 · ints 0+0 · tensors 5+1" in r.stdout
    assert "static 0 · ints 0+0 · tensors 3+1" in r.stdout  # aten.linear


def test_inspect_bad_input(tmp_path):
    (tmp_path / "t.bin").write_bytes(b"\x0f\x00\x0a\x0c\x00\x00\x00\x05")
    r = externspec("inspect", str(tmp_path / "t.bin"))
    assert r.returncode == 1
    assert r.stderr.startswith("externspec inspect: ") and "list declares 5 elements" in r.stderr


# --- convert -------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("doc", ["wrapper", "program"])
def test_convert_round_trip(doc, documents, tmp_path):
    src = documents[doc]
    assert externspec("convert", str(src), str(tmp_path / "d.bin")).returncode == 0
    r = externspec("convert", str(tmp_path / "d.bin"), str(tmp_path / "d.compact"))
    assert r.returncode == 0, r.stderr
    assert re.match(r".*d\.compact: \w+, compact, \d+ bytes \(from binary, \d+ bytes\)", r.stdout)
    assert externspec("convert", str(tmp_path / "d.compact"), str(tmp_path / "back.json")).returncode == 0
    assert json.loads((tmp_path / "back.json").read_text()) == json.loads(src.read_text())
    # --to overrides the extension; '-' is stdout.
    r = externspec_bytes("convert", str(src), "-", "--to", "binary")
    assert r.returncode == 0 and r.stdout == (tmp_path / "d.bin").read_bytes()


@pytest.mark.slow
def test_thriftpy2_reads_the_converted_file(documents, tmp_path):
    externspec("convert", str(documents["wrapper"]), str(tmp_path / "w.tbin"))
    idl = thriftpy2.load(str(IDL), module_name="cli_idl_thrift")
    nodes = deserialize(idl.ExternKernelNodes(), (tmp_path / "w.tbin").read_bytes(), TBinaryProtocolFactory())
    assert [n.node.target for n in nodes.nodes] == ["externspec_art::scale_add", "externspec_art::cast_sum"]
    assert nodes.nodes[0].node.inputs[3].arg.as_ints == [0, 1]
    assert nodes.nodes[1].node.inputs[1].arg.as_scalar_type == 8


@pytest.mark.slow
def test_convert_errors(artifacts, documents, tmp_path):
    r = externspec("convert", str(documents["wrapper"]), str(tmp_path / "out.txt"))
    assert r.returncode == 2 and "cannot tell the output format from" in r.stderr
    externspec("convert", str(documents["wrapper"]), str(tmp_path / "w.bin"))
    (tmp_path / "cut.bin").write_bytes((tmp_path / "w.bin").read_bytes()[:-20])
    r = externspec("convert", str(tmp_path / "cut.bin"), str(tmp_path / "x.json"))
    assert r.returncode == 1
    assert re.search(r"cut\.bin: \$\.nodes\[1\]\.node\.\S+: input truncated", r.stderr), r.stderr
    assert not (tmp_path / "x.json").exists()
    r = externspec("convert", str(artifacts["ep"]), str(tmp_path / "x.json"))
    assert r.returncode == 1 and "holds 3 documents" in r.stderr


# --- terminal behaviour --------------------------------------------------------------------------------


def _run_in_pty(args: list[str], env: dict[str, str]) -> str:
    """Run with stdout and stderr on a pseudo-terminal; returns everything it printed."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(command(*args), stdout=follower, stderr=follower,
                            cwd=REPO, env=env)
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            proc.kill()
            raise TimeoutError(args)
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode()


def test_colour_and_progress_only_on_a_tty(tmp_path):
    files = []
    for i in range(3):
        p = tmp_path / f"n{i}.json"
        p.write_text(json.dumps({"nodes": [], "schema_version": {"major": 1, "minor": 0}}))
        files.append(str(p))
    # wide enough for the whole path (pytest-xdist temp paths exceed a pty's default 80 columns)
    env = {**{k: v for k, v in os.environ.items() if k != "NO_COLOR"}, "COLUMNS": "400"}
    out = _run_in_pty(["validate", *files], env)
    assert "\x1b[32mOK\x1b[0m" in out  # green OK
    assert f"[3/3] {files[2]}" in out  # progress line, redrawn with \r
    assert "\r" in out
    plain = _run_in_pty(["validate", *files], {**env, "NO_COLOR": "1"})
    assert "\x1b[3" not in plain and "OK" in plain
    piped = externspec("validate", *files, env=env)
    assert not ANSI.search(piped.stdout + piped.stderr) and "[1/3]" not in piped.stderr


def test_wide_values_are_clipped_to_the_terminal_width(tmp_path):
    doc = {"nodes": [{"name": "b", "node": {"target": "x::y", "inputs": [
        {"name": "a", "arg": {"as_ints": list(range(200))}}], "outputs": [], "metadata": {}}}]}
    (tmp_path / "wide.json").write_text(json.dumps(doc))
    env = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1"}
    out = _run_in_pty(["inspect", "--no-slots", str(tmp_path / "wide.json")], env)
    table_lines = [ln for ln in out.splitlines() if "as_ints" in ln]
    assert table_lines and all(len(ln.rstrip("\r")) <= 80 for ln in table_lines)
    assert "…" in table_lines[0]
    piped = externspec("inspect", "--no-slots", str(tmp_path / "wide.json"))
    assert "199]" in piped.stdout  # not a terminal: never clipped


def test_shutil_which_is_not_needed():
    """The command works without being on PATH: `python -m externspec` is enough."""
    env = {**os.environ, "PATH": ""}
    r = externspec("version", env=env)
    assert r.returncode == 0 and shutil.which("externspec", path="") is None


def test_format_override_and_node_spec(tmp_path):
    """An unknown extension: JSON is sniffed, Thrift needs --from (binary is the guess)."""
    spec = PAYLOADS / "v1.0/node_spec_0.json"
    assert externspec("convert", str(spec), str(tmp_path / "spec.compact")).returncode == 0
    (tmp_path / "spec.compact").rename(tmp_path / "spec.dat")
    r = externspec("validate", "--from", "compact", str(tmp_path / "spec.dat"))
    assert r.returncode == 0 and "(ExternKernelNode)" in r.stdout, r.stdout
    r = externspec("validate", str(tmp_path / "spec.dat"))  # read as binary: wrong
    assert r.returncode == 1 and r.stdout.startswith("INVALID"), r.stdout
    (tmp_path / "spec.txt").write_bytes(spec.read_bytes())
    r = externspec("inspect", "--no-slots", "--json", str(tmp_path / "spec.txt"))
    assert r.returncode == 0, r.stderr
    ((data,),) = [r["documents"] for r in json.loads(r.stdout)]
    assert data["type"] == "ExternKernelNode" and len(data["nodes"]) == 1
    assert data["nodes"][0]["target"] == json.loads(spec.read_text())["node"]["target"]
