"""The GPU check's CPU-side parts (tests/gpu/check.py): its arguments, and its dry mode, which runs
the same code as on a GPU (the zoo compiled, both runners against eager, the table and the last
line) on the CPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gpu import check, zoo


def test_arguments() -> None:
    args = check.parse_args(["--device", "cpu", "--cases", "custom_op,encoder_layer", "--modes", "lite"])
    assert (args.device, args.cases, args.modes) == ("cpu", ["custom_op", "encoder_layer"], ["lite"])
    assert check.plan(args) == [("custom_op", "lite"), ("encoder_layer", "lite")]
    # weights_blob and extern_chain are compiled in default mode only
    assert check.plan(check.parse_args(["--modes", "lite"])) == [(n, "lite") for n, c in zoo.CASES.items()
                                                                 if "lite" in c.modes]
    assert check.parse_args([]).device == "cuda"
    assert check.parse_args([]).matrix and not check.parse_args(["--no-matrix"]).matrix


@pytest.mark.parametrize("argv", [["--cases", "mlp,nope"], ["--modes", "fast"], ["--jobs", "0"],
                                  ["--device", "tpu"]])
def test_bad_arguments_are_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        check.parse_args(argv)
    assert info.value.code == 2
    assert "gpu-check: error:" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::FutureWarning")  # torch pickling a pytree spec, from copyreg
def test_dry_mode_runs_the_check_on_the_cpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The custom op (compiled with cpp_extension, called through the proxy executor) and the extern
    chain through both runners against eager, as on a GPU; the CUDA-only rows are skipped."""
    assert check.main(["--device", "cpu", "--cases", "custom_op,extern_chain", "--modes", "default",
                       "--repeat", "2", "--jobs", "1", "--work-dir", str(tmp_path), "--no-matrix"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "gpu-check: 5 passed, 0 failed"
    assert out[-2] == "(2 skipped, not counted)"
    rows = {line.split("  ")[0].strip(): line for line in out if "  pass  " in line or "  skip  " in line}
    assert "torch's runner equal" in rows["custom_op/default [8x64]"]
    assert "32 calls per forward" in rows["extern_chain/default per extern call"]
