"""The worked example of a major bump: a 2.0 variant of the IDL that renames
ExternKernelNode.name to `buffer`, the checker's verdict on it, models generated from it, its
upgrader, and every v1.0 extern-kernel payload loading under it (in Python, and through
`externspec upgrade` for the C++ side, which refuses older majors)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import externspec as es
from externspec import cli
from externspec.codegen import compat
from externspec.wire import upgrade
from tests.support import schema_v2
from tests.support.paths import IDL, PAYLOADS
from tests.support.schema_v2 import rename_name_to_buffer, v2_idl_text

V1_EXTERN_FILES = sorted(
    PAYLOADS / index.parent.name / e["path"]
    for index in PAYLOADS.glob("v1.*/index.json")
    for e in json.loads(index.read_text(encoding="utf-8"))
    if e["type"] == "ExternKernelNodes"
)


@pytest.fixture(scope="module")
def v2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """Pydantic models generated from the 2.0 IDL, importable as `externspec_test_v2_models`."""
    with schema_v2.v2_models(tmp_path_factory.mktemp("v2"), "externspec_test_v2_models") as module:
        yield module


@pytest.fixture
def upgrader() -> Iterator[None]:
    with upgrade.registered("ExternKernelNodes", 1, rename_name_to_buffer):
        yield


def test_checker_requires_a_major_bump_for_the_rename(tmp_path: Path) -> None:
    old = compat.load(IDL, "schema/externspec.thrift")
    new = compat.load(tmp_path / "x.thrift", "v2.thrift", text=v2_idl_text())
    report = compat.compare(old, new)
    assert [f.rule for f in report.findings] == ["FIELD_SAME_NAME"]
    assert report.required == compat.Bump.MAJOR and report.ok
    too_small = compat.compare(old, compat.load(tmp_path / "y.thrift", "v2.thrift",
                                                text=v2_idl_text('{"major": 1, "minor": 1}')))
    assert not too_small.ok
    assert too_small.remediation()[0].startswith('set SCHEMA_VERSION to {"major": 2, "minor": 0}')


def test_v2_models_carry_their_version(v2: ModuleType) -> None:
    assert (v2.SCHEMA_VERSION.major, v2.SCHEMA_VERSION.minor) == (2, 0)
    assert "buffer" in v2.ExternKernelNode.model_fields and "name" not in v2.ExternKernelNode.model_fields


@pytest.mark.parametrize("path", V1_EXTERN_FILES, ids=lambda p: p.name)
def test_v1_payloads_load_under_v2(v2: ModuleType, upgrader: None, path: Path) -> None:
    v1 = es.load(path, es.ExternKernelNodes)
    for strict in (False, True):
        nodes = es.load(path, v2.ExternKernelNodes, strict=strict)
        assert (nodes.schema_version.major, nodes.schema_version.minor) == (2, 0)
        assert [n.buffer for n in nodes.nodes] == [n.name for n in v1.nodes]
        assert [n.node.target for n in nodes.nodes] == [n.node.target for n in v1.nodes]


def test_upgrader_is_pure(upgrader: None) -> None:
    doc = json.loads(V1_EXTERN_FILES[0].read_text(encoding="utf-8"))
    before = json.dumps(doc)
    out = upgrade.upgrade(doc, "ExternKernelNodes", (1, 0), 2)
    assert json.dumps(doc) == before
    assert out["schema_version"] == {"major": 2, "minor": 0}
    assert all("buffer" in n and "name" not in n for n in out["nodes"])


def test_without_an_upgrader_an_older_major_is_a_version_error(v2: ModuleType) -> None:
    path = V1_EXTERN_FILES[0]
    with pytest.raises(es.VersionError, match="has no upgrader of ExternKernelNodes from major 1 to 2") as err:
        es.load(path, v2.ExternKernelNodes)
    assert str(err.value).startswith(f"{path}: $.schema_version: document schema 1.0")


def test_upgrade_command_writes_a_v2_file(v2: ModuleType, upgrader: None, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    src = PAYLOADS / "v1.0/extern_nodes_externspec.json"
    out = tmp_path / "upgraded.json"
    assert cli.main(["upgrade", str(src), str(out), "--models", v2.__name__]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {out} (schema 2.0)"
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["schema_version"] == {"major": 2, "minor": 0}
    assert [n["buffer"] for n in doc["nodes"]] == ["buf0", "buf3"]
    # A 2.0 reader takes it as is; a 1.0 reader (the installed models) refuses the newer major.
    assert es.load(out, v2.ExternKernelNodes).nodes[0].buffer == "buf0"
    with pytest.raises(es.VersionError, match="reads major 1 only: upgrade externspec"):
        es.load(out, es.ExternKernelNodes)


def test_upgrade_command_reports_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"nodes": [{"name": 3}], "schema_version": {"major": 1, "minor": 0}}', encoding="utf-8")
    assert cli.main(["upgrade", str(bad), str(tmp_path / "out.json")]) == 1
    assert "$.nodes[0].name: expected `str`, got `int`" in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()


def test_policy_message_for_an_older_major_names_the_upgrade_command(v2: ModuleType) -> None:
    """The message the C++ decoder mirrors when it refuses an older major (it runs no upgraders)."""
    from externspec.wire import version

    policy = version.policy_for(v2.ExternKernelNodes)
    with pytest.raises(es.VersionError) as err:
        policy.check_raw((1, 4), [], "model.wrapper.json")
    assert str(err.value) == (
        "model.wrapper.json: $.schema_version: document schema 1.4 has major version 1; this reader "
        "(schema 2.0) reads major 2 only: upgrade the file with `externspec upgrade IN OUT`"
    )


def test_unknown_key_surviving_the_upgrade_is_a_version_error(v2: ModuleType, upgrader: None) -> None:
    doc = json.loads((PAYLOADS / "v1.0/extern_nodes_externspec.json").read_text(encoding="utf-8"))
    doc["nodes"][0]["priority"] = 1
    with pytest.raises(es.VersionError) as err:
        es.loads(json.dumps(doc), v2.ExternKernelNodes, source="old.json")
    assert str(err.value) == ("old.json: $.nodes[0]: unknown key `priority` (after upgrading schema 1.0 to 2.0): "
                              "the document carries a field the upgraders do not know")
