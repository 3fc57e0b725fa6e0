"""The generated C++ API, and each C++-header defect of torch 2.13 (docs/torch-defects.md) shown side by side:
torch's generated_serialization_types.h misbehaves on the document, externspec's header does not."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import torch

import externspec as es
from externspec.cpp_include import compile_flags
from tests.decoder_cpp.harness import CACHE
from tests.support.cppbuild import build
from tests.support.paths import CONFORMANCE

pytestmark = pytest.mark.slow

SOURCE = Path(__file__).with_name("api_and_defects.cpp")
TORCH_INCLUDE = Path(torch.__file__).parent / "include"
INVALID = CONFORMANCE / "invalid"


@pytest.fixture(scope="module")
def exe() -> Path:
    flags = [*compile_flags("nlohmann"), f"-I{TORCH_INCLUDE}", "-O1", "-Wall", "-Wextra", "-Werror"]
    return build(SOURCE, CACHE, "api_and_defects", flags,
                 extra_deps=[TORCH_INCLUDE / "torch/csrc/utils/generated_serialization_types.h"])


def test_generated_api(exe: Path) -> None:
    out = subprocess.run([str(exe), "api"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    checks = dict(line.split(" ", 2)[1:] if line.count(" ") >= 2 else (line.split(" ")[1], "")
                  for line in out.stdout.splitlines())
    assert set(checks) == {"union_checked_accessors", "recursive_graph_in_argument", "enums", "constants",
                           "decode_error", "ordered_map"}
    v = es.SCHEMA_VERSION
    assert checks["constants"] == f"{v.major}.{v.minor} {es.TORCH_EXPORT_SCHEMA_MAJOR} {es.IDL_CHECKSUM}"


def _both(exe: Path, doc: Path) -> tuple[tuple[str, str], tuple[str, str]]:
    out = subprocess.run([str(exe), "defects"], input=f"{doc}\n", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    (torch_line, ours_line) = out.stdout.splitlines()
    t = torch_line.split("\t")
    o = ours_line.split("\t")
    assert t[0] == "torch" and o[0] == "ours"
    return (t[1], t[2]), (o[1], o[2])


def test_missing_required_field_is_an_error_not_a_default(exe: Path) -> None:
    torch_result, ours = _both(exe, INVALID / "missing_required_field.json")
    assert torch_result[0] == "OK"  # torch silently defaulted the missing `arg`
    assert ours == ("ERR", "$.nodes[0].node.inputs[0]: missing required field `arg`")


def test_unknown_union_member_is_rejected_at_decode(exe: Path) -> None:
    torch_result, ours = _both(exe, INVALID / "union_unknown_member.json")
    assert torch_result[0] == "OK" and torch_result[1].startswith("decoded")  # accepted, fails later
    assert ours == ("ERR", "$.nodes[0].node.inputs[1].arg: unknown key `as_quaternion`")


def test_two_union_keys_are_rejected_not_first_wins(exe: Path) -> None:
    torch_result, ours = _both(exe, INVALID / "union_two_members.json")
    assert torch_result[0] == "OK" and '"as_int":3' in torch_result[1] and "as_float" not in torch_result[1]
    assert ours == ("ERR", "$.nodes[0].node.inputs[0].arg: expected exactly one member of `Argument`, "
                           "got 2 (as_float, as_int)")


def test_errors_carry_the_json_path(exe: Path) -> None:
    torch_result, ours = _both(exe, INVALID / "int_as_string.json")
    assert torch_result[0] == "ERR" and "$" not in torch_result[1] and "nodes" not in torch_result[1]
    assert ours == ("ERR", "$.nodes[0].node.inputs[1].arg.as_int: expected `int`, got `str`")


def test_re_encoding_keeps_key_order_and_bytes(exe: Path, tmp_path: Path) -> None:
    doc = tmp_path / "ordered.json"
    doc.write_text('{"nodes": [{"name": "b", "node": {"target": "t", "inputs": [], "outputs": [], '
                   '"metadata": {"zeta": "1", "alpha": "2"}}}]}')
    torch_result, ours = _both(exe, doc)
    assert '"alpha":"2","zeta":"1"' in torch_result[1]  # std::map: alphabetical
    assert ours == ("OK", es.dumps(es.load(doc, es.ExternKernelNodes)))
    assert '"zeta":"1","alpha":"2"' in ours[1]
