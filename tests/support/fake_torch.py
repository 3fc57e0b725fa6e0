"""A CMake package `Torch` of any version, for CMake's side of the refusal of an unsupported torch
(tests/packaging/test_torch_support.py, and the installed wheel's in tests/packaging/test_wheel.py)."""

from __future__ import annotations

from pathlib import Path


def fake_torch(prefix: Path, version: str) -> Path:
    """A CMake package `Torch` of `version` (an interface target, nothing to link): a release this
    machine does not have, for CMake's side of the refusal."""
    config = prefix / "share" / "cmake" / "Torch"
    config.mkdir(parents=True)
    (config / "TorchConfig.cmake").write_text("if(NOT TARGET torch)\n  add_library(torch INTERFACE IMPORTED)\n"
                                              "endif()\nset(TORCH_LIBRARIES torch)\nset(TORCH_FOUND TRUE)\n")
    (config / "TorchConfigVersion.cmake").write_text(f'set(PACKAGE_VERSION "{version}")\n'
                                                     "set(PACKAGE_VERSION_COMPATIBLE TRUE)\n")
    return config
