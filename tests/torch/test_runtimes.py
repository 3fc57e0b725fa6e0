"""Which runtimes run a package (`externspec.runtimes`, `externspec check-spec --runtimes`; issue 44, item 7),
held to what the cross-version matrix measured: every cell of the running torch's release, run here
through es.cpp.AOTIRunner, the Python executor and torch's own runner, and every cell measured by hand
under each supported torch (tests/data/matrix/measured.json); and docs/torch-compat.md's table is what
`python -m tests.support.matrix_table` generates from the function.

CI runs this file in each torch environment it makes (2.13, 2.14, 2.15), so each release's column is
measured there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import externspec as es
from externspec import runtimes
from externspec.torch_releases import RELEASE_NAMES
from tests.support import matrix, matrix_table

pytestmark = pytest.mark.slow

RELEASE = matrix.release()
MEASURED = json.loads((matrix.DATA / "measured.json").read_text(encoding="utf-8"))

# A measured symbol (measured.json's legend) -> the verdict kinds it shows ("model_code": a cell of
# matrix.KNOWN_FAILING); ✓⁺ was not measured.
SHOWS: dict[str, set[str | None]] = {
    "✓": {None}, "P": {"c_shim"}, "✗ u": {"c_shim"}, "✗ n": {"omitted_defaults"},
    "✗ d": {"omitted_defaults_silent"}, "✗ ∅": {"omitted_defaults_silent"}, f"✗ {matrix_table.ALPHA}": {"model_code"},
    "✗ s": {"omitted_defaults", "omitted_defaults_silent", "model_code"},
}


def _kind(writer: str, case: str, verdict: runtimes.Verdict) -> str | None:
    return "model_code" if (writer, case) in matrix.KNOWN_FAILING else verdict.kind


def test_the_python_table_is_the_runners() -> None:
    """externspec.torch_releases is cpp/csrc/aoti_runner/torch_releases.inc, row for row."""
    rows = re.findall(r'^\{"(\d+\.\d+)", (kImport|kExport), "(\w+)"\},$', matrix.RELEASE_NAMES.read_text(), re.M)
    assert {name: ("import" if k == "kImport" else "export", since) for since, k, name in rows} == RELEASE_NAMES
    assert list(RELEASE_NAMES) == [name for _, _, name in rows]


def test_the_documented_table_is_generated() -> None:
    assert matrix_table.documented() == matrix_table.table(), (
        "docs/torch-compat.md's cross-version table differs from what externspec.runtimes gives: run "
        "`make matrix-table` (python -m tests.support.matrix_table --write)")


def test_every_measured_cell_is_what_the_function_says() -> None:
    checked = 0
    for row in MEASURED["rows"]:
        for writer in row["compiled_by"]:
            path = str(matrix.package(writer, row["case"]))
            for release, measured in row["run_by"].items():
                ours, theirs = measured.split(" / ")
                cells = {v.runtime: v for v in runtimes.runtimes(path, [release])}
                for symbol, names in ((ours, ("es.cpp", "python")), (theirs, ("torch",))):
                    if symbol == "✓⁺":
                        continue
                    for name in names:
                        assert _kind(writer, row["case"], cells[name]) in SHOWS[symbol], (path, release, name, symbol)
                        checked += 1
    assert checked == 4 * 5 * 5 * 3 - 3 * 3 * 2  # every cell of the four cases, but the ✓⁺ ones


@pytest.mark.filterwarnings("ignore:.*the package records no dtype or shape:UserWarning")
@pytest.mark.parametrize("route", list(runtimes.RUNTIMES))
@pytest.mark.parametrize(("writer", "case", "path"), matrix.packages(),
                         ids=[f"{w}-{c}" for w, c, _ in matrix.packages()])
def test_this_releases_cell_runs_as_the_function_says(writer: str, case: str, path: Path, route: str) -> None:
    """Each package through each runtime of this torch: it runs equal to eager exactly when the function
    says so; externspec's runner refuses a package calling C-shim functions this torch lacks at load."""
    (verdict,) = [v for v in runtimes.runtimes(str(path), [RELEASE]) if v.runtime == route]
    kind = _kind(writer, case, verdict)
    if kind is None:
        matrix.run(path, route)
        return
    with pytest.raises(Exception) as info:  # every failure of a runner is a measurement here
        matrix.run(path, route)
    if kind == "c_shim" and route != "torch":
        assert isinstance(info.value, es.PackageError), info.value
