"""The README's C++ program (`app.cpp`) and its compile lines, run as printed: against the checkout
(tests/decoder_cpp/test_include.py) and against the installed wheel (tests/packaging/test_wheel.py)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.support.paths import REPO

README = REPO / "README.md"
DOCUMENT = '{"nodes":[{"name":"buf0","node":{"target":"aten::relu","inputs":[],"outputs":[],"metadata":{}}}]}'
# `app.cpp` of the README (and of the packaging tests): decode one extern-kernel document with the
# line's backend and print its first target.
APP_SOURCE = """#include <externspec/%s>
#include <iostream>
int main() {
  auto nodes = externspec::decode<externspec::ExternKernelNodes%s>(R"(%s)");
  std::cout << nodes.nodes.at(0).node.target << "\\n";
}
"""


def compile_lines() -> list[str]:
    """The `g++ ...` lines of the README's sh blocks, as printed."""
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()
            if line.startswith("g++ ")]


def run_compile_line(line: str, directory: Path, env: dict[str, str]) -> None:
    """Write the line's app.cpp into `directory`, run the line with bash, then run the program."""
    simdjson = "simdjson" in line
    header, backend = ("backend_simdjson.h", ", externspec::SimdjsonBackend") if simdjson else ("externspec.h", "")
    (directory / "app.cpp").write_text(APP_SOURCE % (header, backend, DOCUMENT))
    (directory / "app").unlink(missing_ok=True)
    proc = subprocess.run(["bash", "-c", line], cwd=directory, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{line}\n{proc.stderr[-4000:]}"
    out = subprocess.run([str(directory / "app")], capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout) == (0, "aten::relu\n"), f"{line}\n{out.stderr}"
