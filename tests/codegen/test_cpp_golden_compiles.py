"""Every golden C++ header (tests/codegen/cases/*/expected/cpp) compiles, with decode and encode
instantiated for each of its types: the feature IDLs (recursion, optional self-reference, map
defaults, unions) exercise layouts the main schema does not have."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from externspec._cache import cache_dir
from externspec.codegen import ir, parse_text
from externspec.cpp_include import get_include

CASES = Path(__file__).parent / "cases"
STAMPS = cache_dir() / "cpp" / "golden-compiles"

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir()))
def test_golden_header_compiles(case: str, tmp_path: Path) -> None:
    schema = parse_text((CASES / case / "schema.thrift").read_text(), f"cases/{case}/schema.thrift")
    uses = [f"  (void)externspec::encode(externspec::decode<externspec::{t.name}>(json));"
            for t in schema.types if isinstance(t, ir.Struct)]
    source = tmp_path / "use.cpp"
    source.write_text('#include <externspec/externspec.h>\n#include <string_view>\n'
                      "void use(std::string_view json) {\n" + "\n".join(uses) + "\n}\n")
    # The golden header in place of the shipped one, among the hand-written headers it includes.
    include = tmp_path / "include"
    shutil.copytree(Path(get_include()) / "externspec", include / "externspec")
    (include / "externspec" / "externspec.h").write_bytes(
        (CASES / case / "expected" / "cpp" / "externspec.h").read_bytes())
    cmd = ["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", f"-I{include}", str(source)]
    # Compiled once per content: the stamp is keyed by the headers, the instantiations and the command.
    key = hashlib.sha256(source.read_bytes() + " ".join(cmd[:-2]).encode())
    for header in sorted(include.rglob("*.h")):
        key.update(header.read_bytes())
    stamp = STAMPS / f"{case}-{key.hexdigest()[:16]}"
    if stamp.exists():
        return
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.touch()
