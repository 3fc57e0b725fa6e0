"""The wheel as a user gets it: `pip wheel --no-build-isolation .` of this checkout (the README's
build against the installed torch), installed with that torch into a fresh virtual environment (no
system site-packages, nothing of the checkout on its path).

Both are cached under `<cache>/wheel/`, keyed by the files the wheel is built from and the torch
version: building compiles the C++ runtime (minutes on 2 cores), so a session builds at most once.
The test workers (`pytest -n 2`) take a file lock to make either one, so one builds and the other
waits for it.

torch is the one of the running environment, hard-linked into the venv with the distributions it
requires (`_link_distribution`), not installed again: torch 2.14.1's CUDA build is 5.4 GB, and a
second copy of it filled CI's disk. pip then sees the torch requirement satisfied as it would on a
user's machine with torch installed first, and installs the wheel and its other dependencies.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import torch
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from externspec._cache import cache_dir
from externspec.cpp import binding
from tests.support.paths import REPO

CACHE = cache_dir() / "wheel"
TORCH_REQUIREMENT = f"torch=={torch.__version__.split('+')[0]}"
# What the wheel is built from (the sdist minus tests, docs and benchmarks).
_INPUTS = ("pyproject.toml", "CMakeLists.txt", "README.md", "LICENSE", "cmake", "python/externspec", "codegen")


def wheel_key() -> str:
    h = hashlib.sha256(f"{torch.__version__} {sys.version_info[:2]}".encode())
    for name in _INPUTS:
        root = REPO / name
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file()
                                                      and "__pycache__" not in p.parts)
        for path in files:
            h.update(str(path.relative_to(REPO)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}")
    return proc


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    """Held by one process at a time (`path`.lock beside it): the one that makes `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f"{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _atomic_dir(path: Path, make: Callable[[Path], None]) -> Path:
    """Make `path` once: built under a temporary name and renamed, so a crash leaves nothing."""
    with _exclusive(path):
        if not path.exists():
            tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}-"))
            try:
                make(tmp)
                os.replace(tmp, path)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    return path


def built_wheel() -> tuple[Path, float]:
    """The platform wheel `pip wheel .` builds from this checkout, and how long the build took
    (0 when it came from the cache)."""
    started = time.monotonic()
    built = False

    def make(out: Path) -> None:
        nonlocal built, started
        # es.cpp's source build first (or a wait for the worker building it): under `make test`'s
        # ccache the wheel's compile of the same sources then takes its objects (Makefile, "ccache").
        # The time reported is the wheel's alone.
        binding.build_library()
        started = time.monotonic()
        env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": "2"}
        _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(REPO)],
             env=env)
        built = True

    directory = _atomic_dir(CACHE / wheel_key() / "dist", make)
    wheels = sorted(directory.glob("externspec-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0], (time.monotonic() - started) if built else 0.0


def _requirement_closure(root: str) -> list[importlib.metadata.Distribution]:
    """The installed distribution `root` and, transitively, those it requires on this platform
    (requirements behind an extra, or whose marker does not hold here, are left out)."""
    found: dict[str, importlib.metadata.Distribution] = {}
    pending = [root]
    while pending:
        name = canonicalize_name(pending.pop())
        if name in found:
            continue
        dist = importlib.metadata.distribution(name)
        found[name] = dist
        for line in dist.requires or ():
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                pending.append(req.name)
    return list(found.values())


def _link_distribution(root: str, site_packages: Path) -> None:
    """Hard-link the files of `root` and its requirements (their RECORD, dist-info included) into
    `site_packages`; files outside site-packages (console scripts) are left out, and so are the
    distributions the venv has already (its own pip and setuptools). A copy where the two
    directories lie on different file systems."""
    present = {canonicalize_name(p.name.split("-")[0]) for p in site_packages.glob("*.dist-info")}
    for dist in _requirement_closure(root):
        if canonicalize_name(dist.metadata["Name"]) in present:
            continue
        for file in dist.files or ():
            if file.parts[0] == "..":
                continue
            source, target = Path(dist.locate_file(file)), site_packages / file
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source, target)
            except OSError:
                shutil.copy2(source, target)


def venv_with_wheel(name: str = "venv") -> Path:
    """The python of a fresh venv holding the wheel and torch (and their dependencies), `<cache>/wheel/
    <key>/<name>`: made once (the docs' fresh environment, tests/support/docs_blocks.py, is another
    name, removed before each run, as the blocks it runs install into it)."""
    wheel, _ = built_wheel()

    venv = CACHE / wheel_key() / name
    done = venv / ".installed"
    with _exclusive(venv):
        if not done.exists():
            # A venv is not relocatable, so it is made in place and marked complete at the end.
            shutil.rmtree(venv, ignore_errors=True)
            _run([sys.executable, "-m", "venv", str(venv)])
            python = venv / "bin" / "python"
            site_packages = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
                                 .stdout.strip())
            _link_distribution("torch", site_packages)
            # The running torch is linked in, so nothing is downloaded; a machine's cap on torch (a pip
            # constraints file: this one's stops at 2.14.1) would refuse the exact pin of a newer one.
            _run([str(python), "-m", "pip", "install", "-q", str(wheel), TORCH_REQUIREMENT],
                 env={**os.environ, "PIP_CONSTRAINT": "/dev/null"})
            done.touch()
    return venv / "bin" / "python"


def venv_env(python: Path, **extra: str) -> dict[str, str]:
    """An environment for the venv: its bin first on PATH, nothing of the checkout importable."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env
