"""Schema version checks on load (docs/versioning.md).

* ExternKernelNodes carries externspec's own `schema_version`. A document without one is
  torch-written and read under the 1.0 baseline. The same major is required; an older minor is
  always read; a newer minor is read when nothing in it is unknown to this reader, else a
  `VersionError` names the unknown key and both versions.
* ExportedProgram carries torch's export schema version, checked against the torch export major
  the IDL mirrors (`TORCH_EXPORT_SCHEMA_MAJOR`); 0.0 means unversioned, as in torch.
* Every other type has no version: unknown keys are ignored (torch's behaviour).
* An older major is upgraded by the registered upgraders (`externspec.wire.upgrade`), then read; with
  no upgrader it is a `VersionError`.

The reader's version comes from the generated module a model class belongs to, so models
generated from another IDL revision (a test's 2.0 variant) are checked against their own
SCHEMA_VERSION with the same code.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from .._generated import models
from ..errors import ErrorDetail, VersionError
from ..messages import message

BASELINE = models.SchemaVersion.model_construct(major=1, minor=0)  # no validator built at import
BASELINE_VERSION = (1, 0)  # what a document without schema_version (torch-written) is read as

# The command that upgrades a file of an older major (the C++ decoder names it when it refuses one).
UPGRADE_COMMAND = message("UPGRADE_COMMAND")


def _fmt(v: models.SchemaVersion | tuple[int, int]) -> str:
    return f"{v[0]}.{v[1]}" if isinstance(v, tuple) else f"{v.major}.{v.minor}"


@dataclass(frozen=True)
class Policy:
    """How one document type is version-checked."""

    forbid_unknown: bool = False  # versioned by externspec: unknown keys are not silently dropped
    reader: tuple[int, int] = (0, 0)  # the schema version of the models doing the reading

    def check(self, model: BaseModel, source: str | None) -> None:
        """Check a decoded document's version (no-op for unversioned types)."""

    def raw_version(self, raw: Any) -> tuple[int, int] | None:
        return None

    def model_version(self, model: BaseModel) -> tuple[int, int] | None:
        return None

    def needs_upgrade(self, doc_version: tuple[int, int] | None, source: str | None = None) -> bool:
        """True when a document of `doc_version` (None: torch-written) is of an older major.
        Raises `VersionError` for a version no schema has (checked before anything is sized by it)."""
        return False

    def check_raw(self, doc_version: tuple[int, int] | None, problems: list[ErrorDetail],
                  source: str | None) -> None:
        """A versioned document failed validation with `problems`: raise VersionError if its
        version explains them (an unknown key of a newer minor)."""


def _check_range(v: tuple[int, int], source: str | None) -> None:
    """Schema majors start at 1 and minors at 0: anything lower is no version at all, refused before
    an upgrade plan or a message is built from it (a major of -10**18 once sized a list)."""
    if v[0] < BASELINE_VERSION[0] or v[1] < 0:
        raise VersionError(message("NOT_A_SCHEMA_VERSION", version=_fmt(v), first_major=BASELINE_VERSION[0]),
                           path="$.schema_version", source=source)


@dataclass(frozen=True)
class ExternNodesPolicy(Policy):
    def check(self, model: BaseModel, source: str | None) -> None:
        v = self.model_version(model)
        if v is not None:
            self._check_major(v, source)

    def model_version(self, model: BaseModel) -> tuple[int, int] | None:
        v = getattr(model, "schema_version", None)
        return None if v is None else (v.major, v.minor)

    def needs_upgrade(self, doc_version: tuple[int, int] | None, source: str | None = None) -> bool:
        if doc_version is None:
            return BASELINE_VERSION[0] < self.reader[0]
        _check_range(doc_version, source)
        return doc_version[0] < self.reader[0]

    def raw_version(self, raw: Any) -> tuple[int, int] | None:
        v = raw.get("schema_version") if isinstance(raw, dict) else None
        if isinstance(v, dict) and isinstance(v.get("major"), int) and isinstance(v.get("minor"), int):
            return (v["major"], v["minor"])
        return None

    def check_raw(self, doc_version: tuple[int, int] | None, problems: list[ErrorDetail],
                  source: str | None) -> None:
        if doc_version is None:
            return
        self._check_major(doc_version, source)
        if doc_version[1] <= self.reader[1]:
            return
        unknown = next((p for p in problems if p["kind"] == "unknown_key"), None)
        if unknown is not None:
            raise VersionError(
                message("UNKNOWN_KEY_OF_NEWER_MINOR", key=unknown["key"], reader=_fmt(self.reader),
                        version=_fmt(doc_version)), path=unknown["path"], key=unknown["key"], source=source
            )

    def _check_major(self, v: tuple[int, int], source: str | None) -> None:
        _check_range(v, source)
        if v[0] == self.reader[0]:
            return
        # An older major is reached only when no upgrader applied (wire upgrades first).
        remedy = (message("UPGRADE_EXTERNSPEC") if v[0] > self.reader[0]
                  else message("UPGRADE_THE_FILE", command=UPGRADE_COMMAND))
        raise VersionError(message("OTHER_MAJOR", version=_fmt(v), major=v[0], reader=_fmt(self.reader),
                                   reader_major=self.reader[0], remedy=remedy), path="$.schema_version", source=source)


@dataclass(frozen=True)
class ExportedProgramPolicy(Policy):
    torch_major: int = models.TORCH_EXPORT_SCHEMA_MAJOR

    def check(self, model: BaseModel, source: str | None) -> None:
        v = model.schema_version  # type: ignore[attr-defined]
        if (v.major, v.minor) != (0, 0) and v.major != self.torch_major:
            raise VersionError(message("OTHER_TORCH_EXPORT_MAJOR", version=_fmt(v), major=self.torch_major),
                               path="$.schema_version", source=source)


_UNVERSIONED = Policy()


@functools.cache
def policy_for(type_: type[BaseModel]) -> Policy:
    """The version policy of a generated model class: the IDL's `version_policy` annotation of
    the type (the class's VERSION_POLICY), read against the consts of its own module."""
    kind = getattr(type_, "VERSION_POLICY", None)
    module = sys.modules.get(type_.__module__)
    version = getattr(module, "SCHEMA_VERSION", None)
    if kind is None or module is None or version is None:
        return _UNVERSIONED
    reader = (version.major, version.minor)
    if kind == "externspec":
        return ExternNodesPolicy(forbid_unknown=True, reader=reader)
    if kind == "torch_export":
        return ExportedProgramPolicy(reader=reader, torch_major=module.TORCH_EXPORT_SCHEMA_MAJOR)
    raise ValueError(f"{type_.__name__}: unknown version policy {kind!r}")
