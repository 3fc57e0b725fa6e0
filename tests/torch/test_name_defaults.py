"""`externspec upgrade --name-defaults` (issue 34 item 4, docs/torch-compat.md "Rewriting a package for
every runner"): the packages torch 2.11 to 2.14 compiled, whose nodes omit the kwarg-only defaults their
wrappers pass, rewritten so each node names them, then run by the running torch's own runner (which
fails the originals) and by both externspec executors, equal to the recorded eager outputs; every other
member byte for byte the same. The decision is taken from the wrapper's call lengths, by the rule an
executor loading the package follows (`LayoutChoice`), or from the release the user states, never guessed."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

import externspec as es
from tests.support import matrix
from tests.support.cli import externspec

# The cases whose extern calls the rewrite changes and every runner then runs (int_add_lite fails in its
# own C-shim code under every runner before 2.15: matrix.FLOAT_ALPHA).
CASES = ("lite", "default")
PASSED = ("2.11", "2.12", "2.13", "2.14")  # the releases whose wrappers pass omitted defaults


def name_defaults(package: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    r = externspec("upgrade", "--name-defaults", "--load", "tests.support.matrix", *extra, str(package), str(out))
    return r.returncode, r.stdout, r.stderr


def rewritten(package: Path, tmp_path: Path) -> Path:
    """`package` rewritten into `tmp_path`, its recorded eager outputs beside it."""
    out = tmp_path / package.name
    rc, stdout, stderr = name_defaults(package, out)
    assert rc == 0, stderr
    assert "NODE_ARGUMENTS" in stdout, stdout
    shutil.copy(matrix.eager_path(package), matrix.eager_path(out))
    return out


def spec(package: Path) -> dict:
    with zipfile.ZipFile(package) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".wrapper.json")]
        return json.loads(z.read(name))


@pytest.mark.slow
@pytest.mark.parametrize("writer", PASSED)
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("route", matrix.ROUTES)
def test_a_rewritten_package_runs_under_every_runner(writer: str, case: str, route: str, tmp_path: Path) -> None:
    package = matrix.DATA / writer / f"{case}.pt2"
    if route == "torch":  # the original fails under torch's runner (each torch words it its own way)
        assert matrix.outcome(package, route) != "equal"
    matrix.run(rewritten(package, tmp_path), route)


@pytest.mark.parametrize("writer", PASSED)
def test_only_the_extern_kernel_file_changes_and_it_names_the_passed_defaults(writer: str, tmp_path: Path) -> None:
    package = matrix.DATA / writer / "lite.pt2"
    out = rewritten(package, tmp_path)
    with zipfile.ZipFile(package) as a, zipfile.ZipFile(out) as b:
        assert [(i.filename, i.compress_type, i.date_time, i.external_attr) for i in a.infolist()] == \
            [(i.filename, i.compress_type, i.date_time, i.external_attr) for i in b.infolist()]
        changed = [i.filename for i in a.infolist() if a.read(i) != b.read(i.filename)]
    assert [n.rsplit(".", 2)[-2:] for n in changed] == [["wrapper", "json"]]
    doc = spec(out)
    assert doc["schema_version"] == {"major": es.SCHEMA_VERSION.major, "minor": es.SCHEMA_VERSION.minor}
    assert doc["call_layout"] == es.CallLayout.NODE_ARGUMENTS
    assert "OMITTED_DEFAULTS_PASSED (decided by the wrapper's call of node " in doc["producer"], doc["producer"]
    named = {(n["node"]["target"], a["name"]): (a["arg"], a["kind"]) for n in doc["nodes"] for a in n["node"]["inputs"]}
    assert named[("aten::addmm", "beta")] == named[("aten::addmm", "alpha")] == ({"as_int": 1}, es.ArgumentKind.KEYWORD)
    assert named[("es_matrix::scale", "k")] == ({"as_int": 3}, es.ArgumentKind.KEYWORD)
    assert named[("es_matrix::scale", "s")] == ({"as_int": 4}, es.ArgumentKind.KEYWORD)
    assert ("es_matrix::scale", "f") not in named  # a float default takes no slot: not passed, not named


def test_a_torch_215_package_is_stamped_and_its_nodes_left_as_they_are(tmp_path: Path) -> None:
    package = matrix.DATA / "2.15" / "lite.pt2"
    doc = spec(rewritten(package, tmp_path))
    assert doc["call_layout"] == es.CallLayout.NODE_ARGUMENTS
    assert "call layout NODE_ARGUMENTS (decided by the wrapper's call of node " in doc["producer"], doc["producer"]
    assert doc["nodes"] == spec(package)["nodes"]


def without_wrapper_source(package: Path, tmp_path: Path) -> Path:
    out = tmp_path / f"bare-{package.name}"
    with zipfile.ZipFile(package) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if not info.filename.endswith(".wrapper.cpp"):
                dst.writestr(info, src.read(info))
    return out


def test_without_the_wrapper_source_the_user_states_the_torch_never_a_guess(tmp_path: Path) -> None:
    package = matrix.DATA / "2.13" / "lite.pt2"
    bare = without_wrapper_source(package, tmp_path)
    rc, _, stderr = name_defaults(bare, tmp_path / "out.pt2")
    assert rc == 1 and not (tmp_path / "out.pt2").exists()
    assert "$.nodes[1]: node 1 `" in stderr and "(aten::addmm) takes 2 ints if the wrapper passed" in stderr, stderr
    assert "state the torch that compiled it (--torch RELEASE)" in stderr, stderr

    assert name_defaults(bare, tmp_path / "stated.pt2", "--torch", "2.13")[0] == 0
    from_wrapper = spec(rewritten(package, tmp_path))
    assert spec(tmp_path / "stated.pt2")["nodes"] == from_wrapper["nodes"]
    assert "compiled by torch 2.13, as stated" in spec(tmp_path / "stated.pt2")["producer"]

    rc, _, stderr = name_defaults(bare, tmp_path / "x.pt2", "--torch", "2.10")
    assert rc == 1 and "torch 2.10: not a release whose call layout externspec knows (2.11, " in stderr, stderr


def with_wrapper_text(package: Path, tmp_path: Path, old: str, new: str) -> Path:
    out = tmp_path / f"edited-{package.name}"
    with zipfile.ZipFile(package) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith(".wrapper.cpp"):
                assert old.encode() in data
                data = data.replace(old.encode(), new.encode())
            dst.writestr(info, data)
    return out


@pytest.mark.parametrize(("old", "new", "messages"), [
    ("proxy_executor, 1, 2,", "proxy_executor, 1, 3,",
     ("$.nodes[1]: node 1 `", "(aten::addmm): its call in the package's wrapper passes 4 tensors and 3 ints, which "
      "match neither of its call layouts (NODE_ARGUMENTS: 4 tensors and 0 ints; OMITTED_DEFAULTS_PASSED: 4 tensors "
      "and 2 ints)")),
    ("proxy_executor, 1, 2,", "proxy_executor, 1, 0,",
     ("$.nodes[4]: node 4 `", "its OMITTED_DEFAULTS_PASSED layout, but this package's calls are laid out "
      "NODE_ARGUMENTS (decided by the wrapper's call of node 1; ")),
])
def test_wrapper_counts_that_fit_no_layout_are_refused(old: str, new: str, messages: tuple[str, str],
                                                       tmp_path: Path) -> None:
    """Refused as an executor loading the package refuses it (`LayoutChoice.decide_at_load`)."""
    edited = with_wrapper_text(matrix.DATA / "2.13" / "lite.pt2", tmp_path, old, new)
    rc, _, stderr = name_defaults(edited, tmp_path / "out.pt2")
    assert rc == 1 and all(m in stderr for m in messages), stderr
    assert not (tmp_path / "out.pt2").exists()


def test_a_stated_torch_that_contradicts_the_wrapper_is_refused(tmp_path: Path) -> None:
    rc, _, stderr = name_defaults(matrix.DATA / "2.13" / "lite.pt2", tmp_path / "out.pt2", "--torch", "2.15")
    assert rc == 1 and "the wrapper's calls say OMITTED_DEFAULTS_PASSED (the wrapper's call of node 1), but torch " \
        "2.15 writes NODE_ARGUMENTS" in stderr, stderr


def test_a_file_externspec_wrote_is_not_rewritten(tmp_path: Path) -> None:
    once = rewritten(matrix.DATA / "2.13" / "lite.pt2", tmp_path)
    rc, stdout, stderr = name_defaults(once, tmp_path / "twice.pt2")
    assert rc == 0, stderr
    assert "no member needed an upgrade (copied)" in stdout
    assert (tmp_path / "twice.pt2").read_bytes() == once.read_bytes()


def test_the_options_go_with_name_defaults(tmp_path: Path) -> None:
    r = externspec("upgrade", "--torch", "2.13", str(matrix.DATA / "2.13" / "lite.pt2"), str(tmp_path / "o.pt2"))
    assert r.returncode == 2 and "--torch and --load go with --name-defaults" in r.stderr


def test_a_bare_extern_kernel_file_is_rewritten_from_the_stated_torch(tmp_path: Path) -> None:
    package = matrix.DATA / "2.13" / "lite.pt2"
    bare = tmp_path / "model.wrapper.json"
    bare.write_text(json.dumps(spec(package)))
    rc, _, stderr = name_defaults(bare, tmp_path / "out.json")
    assert rc == 1 and "(--torch RELEASE)" in stderr, stderr
    rc, _, stderr = name_defaults(bare, tmp_path / "out.json", "--torch", "2.13")
    assert rc == 0, stderr
    assert json.loads((tmp_path / "out.json").read_text())["nodes"] == spec(rewritten(package, tmp_path))["nodes"]


def test_an_op_not_registered_here_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    r = externspec("upgrade", "--name-defaults", str(matrix.DATA / "2.13" / "lite.pt2"), str(tmp_path / "out.pt2"))
    assert r.returncode == 1 and not (tmp_path / "out.pt2").exists()
    assert ".wrapper.json: $.nodes[7]: node 7 `buf15` (es_matrix::scale): no op `es_matrix::scale` is registered" \
        in r.stderr, r.stderr
