"""The torch releases externspec supports, and the rule that checks a torch against them.

The range is written once, as pyproject.toml's `torch` extra (`torch>=2.11,<2.16`: 2.11 to 2.15).
The CMake build reads it from there (CMakeLists.txt, with the same refusal), es.cpp's first-use
build in a source checkout through `requirement()`, and the wheel build through `dynamic_metadata`
below: scikit-build-core calls it (pyproject.toml's `[[tool.dynamic-metadata]]`, loaded from this
file's directory as a top-level module, so this module imports nothing of externspec) to pin a wheel
to the torch minor release it was built against, `torch==2.14.*` (torchvision's convention: torch's
C++ ABI changes between minor releases, so a prebuilt es.cpp runs only beside its own).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

_BOUND = re.compile(r"^(>=|<)(\d+)\.(\d+)$")
_PYPROJECT = Path(__file__).resolve().parent.parent.parent / "pyproject.toml"


def parse_range(requirement: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """`torch>=2.13,<2.15` (or the metadata's `torch<2.15,>=2.13`) -> ((2, 13), (2, 15)): the first
    supported minor release and the first not."""
    name, _, specs = requirement.replace(" ", "").partition("torch")
    bounds = {m.group(1): (int(m.group(2)), int(m.group(3)))
              for m in (_BOUND.match(spec) for spec in specs.split(",")) if m is not None}
    if name or len(specs.split(",")) != 2 or set(bounds) != {">=", "<"}:
        raise ValueError(f"the torch requirement {requirement!r} is not of the form torch>=X.Y,<X.Z")
    return bounds[">="], bounds["<"]


def supported_releases(requirement: str) -> list[str]:
    """The minor releases a range admits: `torch>=2.13,<2.15` -> ["2.13", "2.14"]."""
    (major, low), (high_major, high) = parse_range(requirement)
    if high_major != major:
        raise ValueError(f"the torch requirement {requirement!r} spans major releases")
    return [f"{major}.{minor}" for minor in range(low, high)]


def minor_release(version: str) -> tuple[int, int]:
    """`2.14.1+cu130` -> (2, 14)."""
    major, minor = version.split("+")[0].split(".")[:2]
    return int(major), int(minor)


def refusal(version: str, requirement: str) -> str | None:
    """None when torch `version` is in the range, else the sentence that refuses it."""
    low, high = parse_range(requirement)
    if low <= minor_release(version) < high:
        return None
    releases = supported_releases(requirement)
    return (f"externspec supports torch {' and '.join(releases)} ({requirement}), but torch {version} is "
            f"installed: build against a supported torch")


def requirement() -> str:
    """The supported range: a source checkout's pyproject.toml, else the installed distribution's
    metadata (the `torch` extra)."""
    if _PYPROJECT.exists():
        import tomllib

        extra = tomllib.loads(_PYPROJECT.read_text())["project"]["optional-dependencies"]["torch"]
        return str(extra[0])
    for line in metadata.requires("externspec") or []:
        spec, _, marker = line.partition(";")
        if "extra" in marker and "torch" in marker.split("==")[-1]:
            return spec.strip()
    raise LookupError("externspec's metadata has no `torch` extra")


# scikit-build-core's dynamic-metadata provider (the 0.3 protocol): which build it is, then the field.
_state = "wheel"


def build_state(state: str) -> None:
    global _state
    _state = state


def dynamic_metadata(settings: Mapping[str, Any], project: Mapping[str, Any]) -> dict[str, Any]:
    """A wheel requires the torch minor release it is built against (`torch==2.14.*`); the sdist and
    an editable install (which builds es.cpp on first use, against the torch it imports) do not."""
    if settings:
        raise ValueError(f"the torch pin takes no settings, got {sorted(settings)}")
    if _state not in ("wheel", "metadata_wheel"):
        return {"dependencies": []}
    import torch

    version = torch.__version__
    message = refusal(version, project["optional-dependencies"]["torch"][0])
    if message is not None:
        raise RuntimeError(message)
    major, minor = minor_release(version)
    return {"dependencies": [f"torch=={major}.{minor}.*"]}
