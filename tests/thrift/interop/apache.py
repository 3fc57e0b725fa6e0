"""Apache Thrift, the reference implementation, on schema/externspec.thrift as committed (and thriftpy2).

`thrift --gen py|cpp|js:node` (Debian's thrift-compiler) generates each language's types into
`.cache/thrift_interop/`, keyed by the IDL and the compiler's version; the C++ program compiles once
against libthrift (tests/support/cppbuild), npm's `thrift` installs once. Each implementation reads a
batch of documents (externspec's bytes) and writes each back: `rewrite(impl, jobs)`.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from externspec._cache import cache_dir
from tests.support import cppbuild
from tests.support.paths import IDL

HERE = Path(__file__).resolve().parent
CACHE = cache_dir() / "thrift_interop"
# npm's `thrift`, Apache Thrift's Node.js library: pinned as requirements-dev.txt pins PyPI's `thrift`.
NODE_THRIFT = "thrift@0.24.0"


@dataclass(frozen=True)
class Job:
    """One document for an implementation to read from `source` and write back to `target`."""

    type_name: str
    protocol: str
    source: Path
    target: Path


def _tool(name: str, install: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise RuntimeError(f"`{name}` is not installed: {install}")
    return path


def compiler_version() -> str:
    thrift = _tool("thrift", "apt-get install thrift-compiler (make setup installs it)")
    return subprocess.run([thrift, "--version"], capture_output=True, text=True, check=True).stdout.strip()


def _cached_dir(name: str, build: Callable[[Path], None]) -> Path:
    """`build` a folder into the cache once, atomically and under a lock (parallel test workers)."""
    path = CACHE / name
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
                out = Path(tmp) / name
                out.mkdir()
                build(out)
                os.replace(out, path)
    return path


def generate(language: str) -> Path:
    """The code `thrift --gen LANGUAGE` generates from the IDL (a folder)."""
    key = hashlib.sha256(IDL.read_bytes() + compiler_version().encode()).hexdigest()[:16]

    def build(out: Path) -> None:
        proc = subprocess.run([_tool("thrift", ""), "--gen", language, "-out", str(out), str(IDL)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"thrift --gen {language} {IDL} failed:\n{proc.stdout}{proc.stderr}")

    return _cached_dir(f"gen-{language.replace(':', '-')}-{key}", build)


def python_types() -> types.ModuleType:
    """`thrift --gen py`'s `externspec.ttypes`, imported under another name (externspec is ours)."""
    package = generate("py") / "externspec"
    name = f"apache_externspec_{package.parent.name.replace('-', '_')}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, package / "__init__.py",
                                                      submodule_search_locations=[str(package)])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return importlib.import_module(f"{name}.ttypes")


def cpp_program() -> Path:
    """roundtrip.cpp with `thrift --gen cpp`'s types, linked against libthrift (libthrift-dev)."""
    generated = generate("cpp")
    sources = [HERE / "roundtrip.cpp", generated / "externspec_types.cpp"]
    return cppbuild.build(sources, CACHE / "cpp", "apache_roundtrip",
                          ["-std=c++17", "-O1", f"-I{generated}", "-lthrift"],
                          extra_deps=[generated / "externspec_types.h"])


def node_modules() -> Path:
    """npm's `thrift` (NODE_THRIFT), installed once into the cache."""
    npm = _tool("npm", "install Node.js and npm")

    def build(out: Path) -> None:
        proc = subprocess.run([npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(out),
                               NODE_THRIFT], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"npm install {NODE_THRIFT} failed:\n{proc.stdout}{proc.stderr}")

    return _cached_dir(f"node-{NODE_THRIFT.replace('@', '-')}", build) / "node_modules"


def _write_jobs(jobs: Sequence[Job], path: Path) -> Path:
    path.write_text("".join(f"{j.type_name}\t{j.protocol}\t{j.source}\t{j.target}\n" for j in jobs))
    return path


def _run(cmd: list[str], env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")


def _rewrite_python(jobs: Sequence[Job], work: Path, accelerated: bool) -> None:
    from thrift.protocol import TBinaryProtocol, TCompactProtocol
    from thrift.TSerialization import deserialize, serialize

    factories = ({"binary": TBinaryProtocol.TBinaryProtocolAcceleratedFactory(),
                  "compact": TCompactProtocol.TCompactProtocolAcceleratedFactory()} if accelerated else
                 {"binary": TBinaryProtocol.TBinaryProtocolFactory(),
                  "compact": TCompactProtocol.TCompactProtocolFactory()})
    ttypes = python_types()
    for job in jobs:
        factory = factories[job.protocol]
        doc = deserialize(getattr(ttypes, job.type_name)(), job.source.read_bytes(), factory)
        job.target.write_bytes(serialize(doc, factory))


def _rewrite_thriftpy2(jobs: Sequence[Job], work: Path) -> None:
    import thriftpy2
    from thriftpy2.protocol import TBinaryProtocolFactory, TCompactProtocolFactory
    from thriftpy2.utils import deserialize, serialize

    factories = {"binary": TBinaryProtocolFactory(), "compact": TCompactProtocolFactory()}
    module = thriftpy2.load(str(IDL), module_name="externspec_interop_thrift")
    for job in jobs:
        factory = factories[job.protocol]
        doc = deserialize(getattr(module, job.type_name)(), job.source.read_bytes(), factory)
        job.target.write_bytes(serialize(doc, factory))


def _rewrite_cpp(jobs: Sequence[Job], work: Path) -> None:
    _run([str(cpp_program()), str(_write_jobs(jobs, work / "jobs.tsv"))])


def _rewrite_node(jobs: Sequence[Job], work: Path) -> None:
    env = {**os.environ, "NODE_PATH": str(node_modules())}
    _run([_tool("node", "install Node.js"), str(HERE / "roundtrip.js"),
          str(generate("js:node") / "externspec_types.js"), str(_write_jobs(jobs, work / "jobs.tsv"))], env)


# Each implementation under test: reads every job's source, writes its target. Apache Thrift's, and
# thriftpy2 (an independent one, which codegen's parser builds on) beside them.
IMPLEMENTATIONS: dict[str, Callable[[Sequence[Job], Path], None]] = {
    "thriftpy2": _rewrite_thriftpy2,
    "py": lambda jobs, work: _rewrite_python(jobs, work, accelerated=False),
    "py-accelerated": lambda jobs, work: _rewrite_python(jobs, work, accelerated=True),
    "cpp": _rewrite_cpp,
    "node": _rewrite_node,
}


# Apache Thrift's Python and C++ write a struct's fields in id order (externspec, thriftpy2 and
# Apache Thrift's Node.js: in declaration order).
WRITES_FIELDS_IN_ID_ORDER = frozenset({"py", "py-accelerated", "cpp"})
# Apache Thrift's C++ types hold a Thrift map in a std::map: it writes the keys sorted.
SORTS_MAP_KEYS = frozenset({"cpp"})


def rewrite(implementation: str, jobs: Sequence[Job], work: Path) -> None:
    """Have `implementation` read each job's source and write it back to its target."""
    IMPLEMENTATIONS[implementation](jobs, work)
