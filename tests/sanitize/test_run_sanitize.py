"""`make test-sanitize`'s wiring (tests/sanitize/run_sanitize.py), without building: the tests' processes
load the build the script compiled (the same flags, so the same cache folder), the runtime comes
first in the library list, every report goes to the folder the pass condition reads, and the tests
it runs exist. The run itself is `make test-sanitize` (CI, after `make test`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.sanitize import run_sanitize as rs
from tests.support.paths import REPO

pytestmark = pytest.mark.skipif(shutil.which(rs.COMPILER) is None, reason=f"{rs.COMPILER} not installed")


def test_the_tests_processes_ask_binding_py_for_the_build_the_script_compiled(tmp_path: Path) -> None:
    env = rs.environment(tmp_path)
    # binding.extension splits these on whitespace and hashes the lists, as build_library does.
    assert tuple(env["EXTERNSPEC_CPP_CFLAGS"].split()) == rs.SANITIZE_CFLAGS
    assert tuple(env["EXTERNSPEC_CPP_LDFLAGS"].split()) == rs.SANITIZE_LDFLAGS
    assert "-fno-sanitize-recover=all" in rs.SANITIZE_CFLAGS


def test_the_runtime_is_preloaded_first_and_exists(tmp_path: Path) -> None:
    preload = rs.environment(tmp_path)["LD_PRELOAD"].split()
    assert [Path(p).name.split(".so")[0] for p in preload] == ["libasan", "libubsan", "libstdc++"]
    assert all(os.path.isfile(p) for p in preload)


def test_every_report_goes_to_the_folder_the_pass_condition_reads(tmp_path: Path) -> None:
    env = rs.environment(tmp_path)
    for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
        options = dict(item.split("=", 1) for item in env[name].split(":"))
        assert Path(options["log_path"]).parent == tmp_path
        assert options["halt_on_error"] == "1"
    assert rs.reports(tmp_path) == []
    (tmp_path / "asan.1234").write_text("==1234==ERROR: AddressSanitizer: heap-buffer-overflow")
    assert rs.reports(tmp_path) == [tmp_path / "asan.1234"]


def test_the_tests_it_runs_exist() -> None:
    assert all((REPO / test).exists() for test in rs.TESTS)


def test_the_callers_options_come_after_the_defaults_and_the_log_folder_last(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASAN_OPTIONS", "hard_rss_limit_mb=2560:detect_leaks=1:log_path=/elsewhere")
    items = rs.environment(tmp_path)["ASAN_OPTIONS"].split(":")
    assert items.index("detect_leaks=1") > items.index("detect_leaks=0")  # the sanitizer keeps the last
    assert "hard_rss_limit_mb=2560" in items
    assert items[-1] == f"log_path={tmp_path / 'asan'}"
