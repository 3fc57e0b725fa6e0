"""Every golden C++ header (tests/codegen/cases/*/expected/cpp) compiles, with decode and encode
instantiated for each of its types: the feature IDLs (recursion, optional self-reference, map
defaults, unions) exercise layouts the main schema does not have."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from externspec._cache import cache_dir
from externspec.codegen import emit_cpp, ir, parse_text

CASES = Path(__file__).parent / "cases"
STAMPS = cache_dir() / "cpp" / "golden-compiles"

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir()))
def test_golden_header_compiles(case: str, tmp_path: Path) -> None:
    schema = parse_text((CASES / case / "schema.thrift").read_text(), f"cases/{case}/schema.thrift")
    uses = [f"  (void)externspec::encode(externspec::decode<externspec::{t.name}>(json));"
            for t in schema.types if isinstance(t, ir.Struct)]
    source = tmp_path / "use.cpp"
    source.write_text('#include "externspec.h"\n#include <string_view>\n'
                      "void use(std::string_view json) {\n" + "\n".join(uses) + "\n}\n")
    # The golden header, next to the schema-independent headers the emitter writes beside it.
    include = tmp_path / "include"
    include.mkdir()
    (include / "externspec.h").write_bytes((CASES / case / "expected" / "cpp" / "externspec.h").read_bytes())
    for name, text in emit_cpp.emit(schema).items():
        if name in emit_cpp.STATIC_FILES:
            (include / name).write_text(text)
    cmd = ["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", f"-I{include}", str(source)]
    # Compiled once per content: the stamp is keyed by the headers, the instantiations and the command.
    key = hashlib.sha256(source.read_bytes() + " ".join(cmd[:-2]).encode())
    for header in sorted(include.glob("*.h")):
        key.update(header.read_bytes())
    stamp = STAMPS / f"{case}-{key.hexdigest()[:16]}"
    if stamp.exists():
        return
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.touch()
