"""Schema version checks on load (DESIGN.md, "Versioning").

* ExternKernelNodes carries externspec's own `schema_version`. A document without one is
  torch-written and read under the 1.0 baseline. The same major is required; an older minor is
  always read; a newer minor is read when nothing in it is unknown to this reader, else a
  `VersionError` names the unknown key and both versions.
* ExportedProgram carries torch's export schema version, checked against the torch export major
  the IDL mirrors (`TORCH_EXPORT_SCHEMA_MAJOR`); 0.0 means unversioned, as in torch.
* Every other type has no version: unknown keys are ignored (torch's behaviour).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ._generated import models
from .errors import VersionError

SCHEMA_VERSION = models.SCHEMA_VERSION
BASELINE = models.SchemaVersion(major=1, minor=0)


def _fmt(v: models.SchemaVersion | tuple[int, int]) -> str:
    return f"{v[0]}.{v[1]}" if isinstance(v, tuple) else f"{v.major}.{v.minor}"


@dataclass(frozen=True)
class Policy:
    """How one document type is version-checked."""

    forbid_unknown: bool = False  # versioned by externspec: unknown keys are not silently dropped

    def check(self, model: BaseModel, source: str | None) -> None:
        """Check a decoded document's version (no-op for unversioned types)."""

    def raw_version(self, raw: Any) -> tuple[int, int] | None:
        return None

    def check_raw(self, doc_version: tuple[int, int] | None, unknown: list[tuple[str, str]],
                  source: str | None) -> None:
        """A versioned document failed validation: raise VersionError if its version explains it."""


def _where(source: str | None) -> str:
    return f"{source}: " if source else ""


class ExternNodesPolicy(Policy):
    def check(self, model: BaseModel, source: str | None) -> None:
        v = getattr(model, "schema_version", None)
        if v is not None:
            self._check_major((v.major, v.minor), source)

    def raw_version(self, raw: Any) -> tuple[int, int] | None:
        v = raw.get("schema_version") if isinstance(raw, dict) else None
        if isinstance(v, dict) and isinstance(v.get("major"), int) and isinstance(v.get("minor"), int):
            return (v["major"], v["minor"])
        return None

    def check_raw(self, doc_version: tuple[int, int] | None, unknown: list[tuple[str, str]],
                  source: str | None) -> None:
        if doc_version is None:
            return
        self._check_major(doc_version, source)
        if unknown and doc_version[1] > SCHEMA_VERSION.minor:
            path, msg = unknown[0]
            key = msg.removeprefix("unknown key ").strip("`")
            raise VersionError(
                f"{_where(source)}{path}: key `{key}` is unknown to schema {_fmt(SCHEMA_VERSION)}; the document "
                f"was written with schema {_fmt(doc_version)} (a newer minor version that added it): "
                f"upgrade externspec to read it"
            )

    @staticmethod
    def _check_major(v: tuple[int, int], source: str | None) -> None:
        if v[0] != SCHEMA_VERSION.major:
            raise VersionError(
                f"{_where(source)}$.schema_version: document schema {_fmt(v)} has major version {v[0]}; "
                f"this reader (schema {_fmt(SCHEMA_VERSION)}) reads major {SCHEMA_VERSION.major} only"
            )


class ExportedProgramPolicy(Policy):
    def check(self, model: BaseModel, source: str | None) -> None:
        v = model.schema_version  # type: ignore[attr-defined]
        if (v.major, v.minor) != (0, 0) and v.major != models.TORCH_EXPORT_SCHEMA_MAJOR:
            raise VersionError(
                f"{_where(source)}$.schema_version: torch export schema {_fmt(v)} is not major "
                f"{models.TORCH_EXPORT_SCHEMA_MAJOR}, the torch export schema this reader mirrors"
            )


_POLICIES: dict[type[BaseModel], Policy] = {
    models.ExternKernelNodes: ExternNodesPolicy(forbid_unknown=True),
    models.ExportedProgram: ExportedProgramPolicy(),
}
_UNVERSIONED = Policy()


def policy_for(type_: type[BaseModel]) -> Policy:
    return _POLICIES.get(type_, _UNVERSIONED)
