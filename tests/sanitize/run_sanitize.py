"""`make test-sanitize`: es.cpp (the binding, the C++ executor and the AOTInductor runner) and the
Triton backend over it built with AddressSanitizer and UndefinedBehaviorSanitizer, nothing recovered,
and the tests that feed them hostile input run against that build with the sanitizer runtime
preloaded (in a real tritonserver too), as torch extensions are tested under ASan (torch, CPython and
tritonserver themselves are not instrumented).

    python tests/sanitize/run_sanitize.py [pytest arguments]      (or: make test-sanitize)

Without arguments it runs TESTS; with tests among them, those instead (any test of the suite runs the
same way); pytest's options alone run TESTS with them.

* The build: the binding's own CMake build (binding.py, `build_library`) with SANITIZE_CFLAGS and
  SANITIZE_LDFLAGS, which go into its cache key, so it has a folder of its own under
  `<cache>/cpp/` and never replaces the plain build. It is compiled here, by a process without the
  runtime preloaded; the tests' processes load it because EXTERNSPEC_CPP_CFLAGS/LDFLAGS name the same
  flags (binding.py, `extension`). Compiled by g++ (torch's libstdc++ ABI), whose `-fsanitize=`
  links the shared runtime (libasan.so, libubsan.so) into the module, so a Python that preloads the
  same runtime can import it.
* The pass condition: pytest passes and no process wrote a sanitizer report. Every report of every
  process (pytest's workers and the children that tests start, some of which expect a child to fail)
  goes to a file of a fresh log folder (`log_path`); any file there fails the run and is printed.
* The caller's ASAN_OPTIONS and UBSAN_OPTIONS come after this file's (an option may be added or
  overridden, e.g. `ASAN_OPTIONS=hard_rss_limit_mb=2560` to make a memory blow-up a report), and
  `log_path` after them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMPILER = "g++"
# The sanitizers, as the fuzz harnesses have them (CMakeLists.txt, EXTERNSPEC_FUZZ), with every report
# fatal (UBSan's included) and frame pointers kept for the stack traces; -O1 as the sanitizers advise
# (after the Release build's -O3, binding.py) and -g1, line tables for the reports' frames: half
# the compile time of -O3 -g (g++ 12, proxy_executor.cpp: 23 s against 48 s; 15 s unsanitised).
SANITIZE_CFLAGS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer",
                   "-O1", "-g1")
SANITIZE_LDFLAGS = ("-fsanitize=address,undefined",)
# The runtime, first in the library list as ASan requires (Python is not linked against it).
# libstdc++ too: ASan's `__cxa_throw` interceptor resolves the real one when the runtime starts, and
# Python does not link libstdc++, so without it the first C++ exception thrown (torch throws and
# catches its own at import) aborted in the interceptor.
PRELOAD = ("libasan.so", "libubsan.so", "libstdc++.so")
# Every option is one of the runtime's, each for a reason:
ASAN_OPTIONS = {
    # CPython and torch are not instrumented and keep what they allocate for the process's life
    # (interned objects, op registries, thread pools): LeakSanitizer reports those at exit, not ours.
    "detect_leaks": "0",
    # Stop at the first report (ASan's default; said, as the build's -fno-sanitize-recover says it).
    "halt_on_error": "1",
}
UBSAN_OPTIONS = {
    # As ASan's (the build's -fno-sanitize-recover=all already makes every check fatal).
    "halt_on_error": "1",
    # A UBSan report names only the source line by default; the stack names who called it.
    "print_stacktrace": "1",
}
# The tests that drive es.cpp with hostile input, and the runner's and the C++ executor's own (in CI
# after `make test`, whose cache holds the packages they run; docs/aoti-packages.md, "Sanitizers").
TESTS = ("tests/hostile", "tests/fuzz/test_fuzz_regressions.py", "tests/abi/test_executor_conformance.py",
         "tests/cpp/test_cpp_executor.py", "tests/aoti/test_cpp_aoti.py", "tests/aoti/test_runner_runs.py",
         "tests/aoti/test_runner_inputs.py", "tests/aoti/test_runner_zip_members.py",
         "tests/aoti/test_runner_package_documents.py", "tests/aoti/test_runner_from_bytes.py",
         "tests/aoti/test_extern_outputs.py", "tests/aoti/test_zip_crosscheck.py",
         # issue 54: the CPU check before the library opens, the ELF reader's corpus, bool input bytes,
         # and the Triton backend in a real tritonserver: the backend is built with the same flags
         # (externspec.triton reads EXTERNSPEC_CPP_CFLAGS/LDFLAGS), and the server the tests start
         # inherits the preloaded runtime and the report folder
         "tests/aoti/test_cpu_isa.py", "tests/aoti/test_elf_symbols.py", "tests/aoti/test_runner_input_values.py",
         "tests/triton/test_serving.py")

# Tests that cannot run under ASan, and why (none of them loads es.cpp).
DESELECT = {
    "tests/hostile/test_hostile_limits.py::test_a_major_below_one_is_a_version_error_at_once":
        "its child limits its own address space to 1 GiB (RLIMIT_AS), which ASan's shadow memory, terabytes "
        "reserved at start, already exceeds: every later allocation fails (MemoryError); it tests the Python "
        "decoders",
}


def runtime_libraries() -> list[str]:
    """The sanitizer runtime and libstdc++ of COMPILER, as it links them."""
    paths = []
    for name in PRELOAD:
        found = subprocess.run([COMPILER, f"-print-file-name={name}"], capture_output=True, text=True,
                               check=True).stdout.strip()
        if not os.path.isabs(found):  # the compiler echoes the bare name when it has no such library
            raise SystemExit(f"test-sanitize: {COMPILER} has no {name} (Debian: apt-get install g++)")
        paths.append(os.path.realpath(found))
    return paths


def build() -> Path:
    """Compile the sanitizer build of es.cpp (cached by its flags), without loading it."""
    os.environ["CXX"] = COMPILER  # CMake's compiler at configure time
    from externspec.cpp import binding

    return binding.build_library(SANITIZE_CFLAGS, SANITIZE_LDFLAGS)


def _options(options: dict[str, str], given: str, log_dir: Path, name: str) -> str:
    """`options`, then the caller's own (`given`, which may add or override one, e.g.
    hard_rss_limit_mb), then the log folder, which the pass condition reads and nothing overrides."""
    return ":".join([*(f"{k}={v}" for k, v in options.items()), *filter(None, given.split(":")),
                     f"log_path={log_dir / name}"])


def environment(log_dir: Path) -> dict[str, str]:
    """The environment of the tests' processes: the runtime preloaded, reports into `log_dir`, and
    the flags that make binding.py load the sanitizer build."""
    env = dict(os.environ)
    env.update({
        "LD_PRELOAD": " ".join(runtime_libraries()),
        "ASAN_OPTIONS": _options(ASAN_OPTIONS, env.get("ASAN_OPTIONS", ""), log_dir, "asan"),
        "UBSAN_OPTIONS": _options(UBSAN_OPTIONS, env.get("UBSAN_OPTIONS", ""), log_dir, "ubsan"),
        "EXTERNSPEC_CPP_CFLAGS": " ".join(SANITIZE_CFLAGS),
        "EXTERNSPEC_CPP_LDFLAGS": " ".join(SANITIZE_LDFLAGS),
        "CXX": COMPILER,
    })
    return env


# Run under the tests' environment before them: the module they import is the sanitizer build, and
# the runtime is in the process.
_CHECK = """
import sys
from externspec.cpp import binding
module = binding.extension()
maps = open("/proc/self/maps").read()
assert module.__file__ == sys.argv[1], (module.__file__, sys.argv[1])
assert "libasan.so" in maps and "libubsan.so" in maps, "the sanitizer runtime is not loaded"
"""


def reports(log_dir: Path) -> list[Path]:
    """The report files any process wrote (`log_path` appends the writer's pid)."""
    return sorted(p for p in log_dir.iterdir() if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers (default 2)")
    args, pytest_args = parser.parse_known_args(argv)
    start = time.monotonic()
    library = build()
    log_dir = Path(tempfile.mkdtemp(prefix="externspec-sanitize-"))
    env = environment(log_dir)
    subprocess.run([sys.executable, "-c", _CHECK, str(library)], env=env, cwd=ROOT, check=True)
    # Options alone (`--durations=20`, `-x`) run TESTS with them.
    tests = pytest_args if any(not a.startswith("-") for a in pytest_args) else [*pytest_args, *TESTS]
    deselect = [arg for test in DESELECT for arg in ("--deselect", test)]
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", str(args.workers), *deselect, *tests]
    print(f"test-sanitize: {library.parent.name} (ASan+UBSan), reports to {log_dir}\n"
          f"ASAN_OPTIONS={env['ASAN_OPTIONS']}\nUBSAN_OPTIONS={env['UBSAN_OPTIONS']}\n$ {' '.join(command)}",
          flush=True)
    failed = subprocess.run(command, env=env, cwd=ROOT).returncode
    found = reports(log_dir)
    for path in found:
        print(f"\n==== sanitizer report {path} ====\n{path.read_text(errors='replace')}", file=sys.stderr)
    print(f"test-sanitize: pytest exit {failed}, {len(found)} sanitizer report(s), "
          f"{time.monotonic() - start:.0f} s", flush=True)
    if not found:
        shutil.rmtree(log_dir)
    return 1 if failed or found else 0


if __name__ == "__main__":
    sys.exit(main())
