"""`externspec upgrade` of a .pt2 archive, through real subprocesses: the schema members that need
an upgrade are rewritten, every other member is copied as it is, and torch still loads and runs
the upgraded AOTInductor package. The upgrade is the worked example of a major bump
(tests/compat/test_upgrade.py: ExternKernelNode.name renamed `buffer` in a 2.0 schema)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import zipfile
from pathlib import Path

import pytest

from externspec import wire
from tests.support.cli import externspec
from tests.support.paths import REPO
from tests.support.schema_v2 import v2_models_source

V2 = "externspec_test_v2_upgrading"
NODES = {"nodes": [{"name": "buf0", "node": {"target": "aten::relu", "inputs": [], "outputs": [], "metadata": {}}}]}


@pytest.fixture(scope="module")
def v2_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the 2.0 models as a module that registers the 1 -> 2 upgrader on import."""
    out = tmp_path_factory.mktemp("v2")
    code = v2_models_source(out)
    code += ("\n\nfrom externspec.wire import upgrade as _upgrade\n"
             "from tests.support.schema_v2 import rename_name_to_buffer as _rename\n"
             "_upgrade.register('ExternKernelNodes', 1)(_rename)\n")
    (out / f"{V2}.py").write_text(code, encoding="utf-8")
    return out


def upgrade(*args: str, v2_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if v2_path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(v2_path), str(REPO), env.get("PYTHONPATH", "")])
        args = (*args, "--models", V2)
    return externspec("upgrade", *args, env=env)


def members(path: Path) -> list[tuple[str, int, bytes]]:
    with zipfile.ZipFile(path) as z:
        return [(i.filename, i.compress_type, z.read(i)) for i in z.infolist()]


def archive(path: Path, entries: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return path


@pytest.mark.slow
def test_upgraded_aoti_package_still_loads_and_runs(v2_path: Path, tmp_path: Path) -> None:
    import torch

    from tests.support import (
        artifact_ops,  # noqa: F401  (registers the package's custom ops)
        artifacts,
    )

    package = artifacts.aoti_package()
    out = tmp_path / "upgraded.pt2"
    r = upgrade(str(package), str(out), v2_path=v2_path)
    assert r.returncode == 0, r.stderr
    wrapper = artifacts.archive_member(package, ".wrapper.json")
    assert r.stdout.strip() == f"wrote {out}: upgraded {wrapper} (schema 2.0)"
    before, after = members(package), members(out)
    assert [(n, c) for n, c, _ in after] == [(n, c) for n, c, _ in before]  # names, order, compression
    changed = [n for (n, _, old), (_, _, new) in zip(before, after, strict=True) if old != new]
    assert changed == [wrapper]
    doc = json.loads(artifacts.read_member(out, ".wrapper.json"))
    torch_written = json.loads(artifacts.read_member(package, ".wrapper.json"))
    assert doc["schema_version"] == {"major": 2, "minor": 0}
    assert [n["buffer"] for n in doc["nodes"]] == [n["name"] for n in torch_written["nodes"]]
    runner = torch._inductor.aoti_load_package(str(out))
    module, _ = artifacts.example("custom_ops")
    g = torch.Generator().manual_seed(7)
    inputs = tuple(torch.randn(6, 8, generator=g) for _ in range(3))
    torch.testing.assert_close(runner(*inputs), module(*inputs))


def test_members_that_need_no_upgrade_leave_the_archive_as_it_is(tmp_path: Path) -> None:
    src = archive(tmp_path / "m.pt2", {"m/data/aotinductor/model/x.wrapper.json": json.dumps(NODES).encode(),
                                       "m/data/aotinductor/model/x.wrapper.so": bytes(range(256)) * 64})
    out = tmp_path / "out.pt2"
    r = upgrade(str(src), str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"wrote {out}: no member needed an upgrade (copied)"
    assert out.read_bytes() == src.read_bytes()


def test_an_older_member_is_rewritten_and_the_others_copied(v2_path: Path, tmp_path: Path) -> None:
    weights = os.urandom(3 << 20)  # more than one copy chunk
    entries = {"m/archive_format": b"pt2", "m/data/aotinductor/model/x.wrapper.json": json.dumps(NODES).encode(),
               "m/data/weights/w.bin": weights, "m/models/README.txt": b"not a schema document"}
    for compression in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        src = archive(tmp_path / f"m{compression}.pt2", entries, compression)
        stamped = zipfile.ZipInfo("m/stamped", date_time=(2020, 5, 4, 3, 2, 0))
        stamped.extra = struct.pack("<HHB", 0x5455, 1, 1)  # an extended time stamp record
        stamped.external_attr = 0o644 << 16
        with zipfile.ZipFile(src, "a") as z:
            z.writestr(stamped, b"kept with its header", compression)
        out = tmp_path / f"out{compression}.pt2"
        r = upgrade(str(src), str(out), v2_path=v2_path)
        assert r.returncode == 0, r.stderr
        got = members(out)
        assert [(n, c) for n, c, _ in got] == [(n, compression) for n in [*entries, "m/stamped"]]
        with zipfile.ZipFile(out) as z:
            copied = z.getinfo("m/stamped")
        assert (copied.date_time, copied.extra, copied.external_attr) == (stamped.date_time, stamped.extra,
                                                                           stamped.external_attr)
        assert {n: d for n, _, d in got if not n.endswith(".json")} == {
            **{n: d for n, d in entries.items() if not n.endswith(".json")}, "m/stamped": b"kept with its header"}
        doc = json.loads(dict((n, d) for n, _, d in got)["m/data/aotinductor/model/x.wrapper.json"])
        assert doc["schema_version"] == {"major": 2, "minor": 0} and doc["nodes"][0]["buffer"] == "buf0"
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


@pytest.mark.parametrize("case", ["not a zip", "member too big", "bad JSON member", "newer member"])
def test_archive_errors_name_the_member_and_write_nothing(case: str, tmp_path: Path) -> None:
    member = "m/data/aotinductor/model/x.wrapper.json"
    src = tmp_path / "in.pt2"
    if case == "not a zip":
        src.write_bytes(b"PK\x03\x04 truncated")
        want = f"{src}: not a zip archive (a .pt2 file is one): truncated or not a .pt2"
    elif case == "member too big":
        archive(src, {member: b" " * (wire.MAX_JSON_BYTES + 1)})
        want = (f"{src}:{member}: {wire.MAX_JSON_BYTES + 1} bytes, over the limit of "
                f"{wire.MAX_JSON_BYTES} bytes (externspec.wire.MAX_JSON_BYTES)")
    elif case == "bad JSON member":
        archive(src, {"m/archive_format": b"pt2", member: b'{"nodes": [}'})
        want = f"{src}:{member}: $: Invalid JSON: expected value at line 1 column 12"
    else:
        archive(src, {member: json.dumps({**NODES, "schema_version": {"major": 9, "minor": 0}}).encode()})
        want = f"{src}:{member}: $.schema_version: document schema 9.0 has major version 9"
    out = tmp_path / "out.pt2"
    r = upgrade(str(src), str(out))
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith(f"externspec upgrade: {want}"), r.stderr
    assert "Traceback" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.pt2"]
