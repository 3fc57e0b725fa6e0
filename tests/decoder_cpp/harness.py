"""The compiled conformance harness, driven from Python (see conformance_harness.cpp)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from externspec._cache import cache_dir
from externspec.cpp_include import compile_flags, link_flags

CACHE = cache_dir() / "cpp"
HARNESS_SOURCE = Path(__file__).with_name("conformance_harness.cpp")
CODEC_SOURCE = Path(__file__).with_name("codec_definitions.cpp")
BACKENDS = ("nlohmann", "simdjson")
# The harness builds the tests run: each backend header-only, and the default backend with its codec
# compiled in a translation unit of its own (EXTERNSPEC_SEPARATE_CODEC + EXTERNSPEC_CODEC_DEFINITIONS).
BUILDS = (*BACKENDS, "nlohmann-separate")


@dataclass(frozen=True)
class Outcome:
    """What the C++ decoder did with one document."""

    kind: str  # "OK", "DecodeError" or "VersionError"
    encoded: str = ""  # encode(decode(doc)) when OK
    path: str = ""  # JSON path of the first problem (DecodeError), or VersionError::path()
    message: str = ""  # what()
    error_kind: str = ""  # the first problem's ERROR_KINDS kind (DecodeError)
    key: str = ""  # VersionError::key()


class Harness:
    """Runs the compiled harness over a batch of documents in one process."""

    def __init__(self, exe: Path, build: str):
        self.exe = exe
        self.build = build  # its name in BUILDS

    def run(self, requests: list[tuple[str, Path]], strict: bool = False) -> list[Outcome]:
        stdin = "".join(f"{t}\t{int(strict)}\t{p}\n" for t, p in requests)
        proc = subprocess.run([str(self.exe)], input=stdin.encode(), capture_output=True, timeout=300)
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
        lines = proc.stdout.decode("utf-8").split("\n")[: len(requests)]
        assert len(lines) == len(requests), proc.stdout[-2000:]
        out = []
        for line in lines:
            kind, _, rest = line.partition("\t")
            if kind == "OK":
                out.append(Outcome(kind, encoded=rest))
            elif kind == "DecodeError":
                error_kind, path, message = rest.split("\t", 2)
                out.append(Outcome(kind, path=path, message=message, error_kind=error_kind))
            elif kind == "VersionError":
                path, key, message = rest.split("\t", 2)
                out.append(Outcome(kind, path=path, message=message, key=key))
            else:
                raise AssertionError(f"harness: {line}")
        return out

    def one(self, type_name: str, path: Path, strict: bool = False) -> Outcome:
        return self.run([(type_name, path)], strict)[0]


def harness_sources(build: str) -> list[Path]:
    return [HARNESS_SOURCE, CODEC_SOURCE] if build.endswith("-separate") else [HARNESS_SOURCE]


def harness_flags(build: str) -> list[str]:
    backend = build.removesuffix("-separate")
    flags = [*compile_flags(backend), *link_flags(backend), "-O1", "-Wall", "-Wextra", "-Werror"]
    if backend == "simdjson":
        flags.insert(0, "-DHARNESS_SIMDJSON")
    if build != backend:
        flags.insert(0, "-DEXTERNSPEC_SEPARATE_CODEC")
    return flags
