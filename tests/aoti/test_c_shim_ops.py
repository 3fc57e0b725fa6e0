"""No false refusal by the release check (issue 44, item 8): torch's own custom-op C-shim test model
(`test_custom_op_square`, `tests/support/shim_models.py`) calls `aoti_torch_cpu_fn_square`, a function
no torch release has and the op library `libaoti_custom_ops.so` provides. `es.cpp.AOTIRunner` runs
it equal to eager when that library is loaded in the process (`torch.ops.load_library`) or given in
`op_libraries`, and without either names the function and the option, not another torch.

The op-library cases run in a fresh Python: a library, once loaded, stays loaded for the process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

import externspec as es
from tests.support import shim_models as sm
from tests.support.paths import REPO

pytestmark = pytest.mark.slow

_CHILD = """
import sys, torch, externspec as es
package, library = sys.argv[1], sys.argv[2]
x = torch.randn(2, 3, generator=torch.Generator().manual_seed(0))
try:
    runner = es.cpp.AOTIRunner(package, op_libraries=[library] if library else [])
except es.PackageError as e:
    print("PackageError:", e)
    raise SystemExit(3)
out = runner(x)  # one output: the tensor, as torch's runner returns it
print("equal" if torch.equal(out, x * x) else f"differs: {out} {x * x}")
"""


def _fresh(package: Path, library: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _CHILD, str(package), library], cwd=REPO, capture_output=True,
                          text=True, timeout=600)


def test_library_loaded_in_the_process(extraction_root: Path) -> None:
    package = sm.c_shim_package()  # loads the op library (torch.ops.load_library)
    (x,) = sm.example_inputs()
    eager = sm.Square()(x)
    assert torch.equal(es.cpp.AOTIRunner(str(package))(x), eager)
    assert torch.equal(torch._inductor.aoti_load_package(str(package))(x), eager)  # torch's own runner


def test_library_given_in_op_libraries() -> None:
    package = sm.c_shim_package()
    child = _fresh(package, str(sm.op_library()))
    assert (child.returncode, child.stdout.strip()) == (0, "equal"), child.stderr


def test_library_not_loaded_names_the_function_and_op_libraries() -> None:
    package = sm.c_shim_package()
    child = _fresh(package, "")
    assert child.returncode == 3, child.stderr
    message = child.stdout.strip()
    assert message.startswith(f"PackageError: {package}!data/aotinductor/model/")
    assert (f": its model library calls C-shim functions that neither torch {torch.__version__[:4]} nor any library "
            f"loaded in this process provides: {sm.SHIM} (in no torch release externspec knows); if they are a "
            "custom op library's C shims (aot_inductor.custom_ops_to_c_shims), load that library first "
            "(op_libraries)") in message
    assert "compiled by torch" not in message
