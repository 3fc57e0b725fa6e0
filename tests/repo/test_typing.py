"""The public API is typed: user code with the README's examples passes `mypy --strict` against
the installed package, and the types are real ones (a script with type errors fails where it should).

Unions: `arg.type` is a Literal of the member names, `arg.value` the union of the member types,
and `arg.unwrap(member)` the member's own type (mypy cannot narrow `arg.as_int` from a comparison
of `arg.type`; class patterns in `match` do narrow).
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import externspec as es
from tests.support.paths import REPO

# Names the README's snippets use without defining them, as a user's code would have them.
PARAMS = ("model_json_bytes: bytes, x: torch.Tensor, y: torch.Tensor, index: int, int_args: list[int], "
          "tensor_args: list[torch.Tensor | None]")

# Each line ends with the error mypy must report there (`# E: code`).
WRONG = '''\
import externspec as es


def wrong(arg: es.Argument, nodes: es.ExternKernelNodes) -> None:
    n: int = arg.unwrap("as_float")  # E: assignment
    s: str = arg.as_int  # E: assignment
    if arg.type == "as_flaot":  # E: comparison-overlap
        pass
    runner: int = es.cpp.AOTIRunner  # E: assignment
    target: int = nodes.nodes[0].node.target  # E: assignment
    es.loads(b"{}", es.ExternKernelNodes).nodes.append(3)  # E: arg-type
    es.SpecBuilder(omit_defaults="yes")  # E: arg-type
'''


def readme_snippets() -> list[str]:
    text = (REPO / "README.md").read_text()
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


def user_script() -> str:
    """The README's Python snippets, each as the body of a function of a user's module."""
    out = ["from __future__ import annotations", "", "import torch", "", "import externspec as es", ""]
    for n, snippet in enumerate(readme_snippets()):
        out += ["", f"def readme_{n}({PARAMS}) -> None:", textwrap.indent(snippet, "    ")]
    return "\n".join(out) + "\n"


def test_readme_has_the_snippets_the_check_covers() -> None:
    snippets = readme_snippets()
    assert len(snippets) >= 3
    joined = "\n".join(snippets)
    for used in ("es.loads(", "es.SpecBuilder()", "es.cpp.ProxyExecutor(", "es.cpp.AOTIRunner(", ".unwrap(",
                 "match arg:"):
        assert used in joined, used


@pytest.mark.slow
def test_mypy_strict_on_user_code(tmp_path: Path) -> None:
    """One mypy run (it reads torch's types: ~30 s cold) over the README script and the wrong one,
    from a directory outside the checkout: externspec is found as installed in this venv."""
    (tmp_path / "readme_user.py").write_text(user_script())
    (tmp_path / "wrong_user.py").write_text(WRONG)
    (tmp_path / "mypy.ini").write_text("[mypy]\nstrict = True\n")
    r = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", "cache",
                        "--show-error-codes", "--no-color-output", "--no-error-summary",
                        "readme_user.py", "wrong_user.py"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert r.stderr == "", r.stderr
    errors = [line for line in r.stdout.splitlines() if ": error: " in line]
    assert not [e for e in errors if e.startswith("readme_user.py")], r.stdout
    expected = {(n, m.group(1)) for n, line in enumerate(WRONG.splitlines(), 1)
                if (m := re.search(r"# E: (\S+)", line))}
    found = set()
    for line in errors:
        m = re.fullmatch(r"wrong_user\.py:(\d+): error: .*\[([a-z-]+)\]", line)
        assert m, line
        found.add((int(m.group(1)), m.group(2)))
    assert found == expected, r.stdout


def test_unwrap_returns_the_set_member_and_refuses_the_others() -> None:
    arg = es.Argument(as_float=2.5)
    assert arg.unwrap("as_float") == 2.5 and arg.type == "as_float"
    with pytest.raises(es.UnionAccessError, match="Argument holds `as_float`, not `as_int`"):
        arg.unwrap("as_int")
    with pytest.raises(es.UnionAccessError, match="`Argument` has no member `as_nothing`"):
        arg.unwrap("as_nothing")
    match es.Argument(as_ints=[1, 2]):
        case es.Argument(as_float=float()):
            raise AssertionError("as_ints matched as_float")
        case es.Argument(as_ints=[*ints]):
            assert ints == [1, 2]
