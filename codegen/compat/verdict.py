"""The version-bump policy: what SCHEMA_VERSION must become for a given required bump.

Policy (docs/versioning.md, "Change classes"), as code with a table test:
* none  -> the version stays;
* minor -> (major, minor + 1);
* major -> (major + 1, 0). A major bump resets the minor to 0, unlike torch's (major + 1, 1):
  the first release of every major is X.0, as 1.0 was, and an upgrader from major N produces a
  document of version (N + 1).0 -- the oldest version the new major reader knows;
* forbidden -> no version makes it acceptable.

`exact` (the default) demands precisely the next version: comparing HEAD with the previous
release. `at_least` accepts any later version that is big enough: comparing HEAD with a release
further back in schema/history/, where several bumps may lie in between.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import Bump

Version = tuple[int, int]


def fmt(v: Version | None) -> str:
    return "?" if v is None else f"{v[0]}.{v[1]}"


def expected_version(old: Version, required: Bump) -> Version | None:
    """The version the new schema must declare (None: forbidden, no version fixes it)."""
    if required == Bump.NONE:
        return old
    if required == Bump.MINOR:
        return (old[0], old[1] + 1)
    if required == Bump.MAJOR:
        return (old[0] + 1, 0)
    return None


def actual_bump(old: Version, new: Version) -> Bump | None:
    """The bump a version change expresses (None when it goes backwards)."""
    if new == old:
        return Bump.NONE
    if new[0] == old[0] and new[1] > old[1]:
        return Bump.MINOR
    if new[0] > old[0]:
        return Bump.MAJOR
    return None


@dataclass(frozen=True)
class Verdict:
    ok: bool
    required: Bump
    old: Version | None
    new: Version | None
    expected: Version | None
    message: str


def judge(old: Version | None, new: Version | None, required: Bump, *, at_least: bool = False) -> Verdict:
    """Compare the declared version change with the required bump."""
    expected = expected_version(old, required) if old is not None else None

    def verdict(ok: bool, message: str) -> Verdict:
        return Verdict(ok, required, old, new, expected, message)

    change = f"SCHEMA_VERSION {fmt(old)} -> {fmt(new)}"
    if required == Bump.FORBIDDEN:
        return verdict(False, f"{change}: the changes are forbidden under any version bump")
    if old is None or new is None:
        return verdict(False, f"{change}: a schema declares no SCHEMA_VERSION, so the bump cannot be checked")
    actual = actual_bump(old, new)
    if actual is None:
        return verdict(False, f"{change}: the version goes backwards")
    if at_least:
        if actual >= required:
            return verdict(True, f"{change}: at least the required {required} bump")
        return verdict(False, f"{change}: a {required} bump is required, the version change is only {actual}")
    if new == expected:
        return verdict(True, f"{change}: matches the required {required} bump")
    if actual < required:
        return verdict(False, f"{change}: a {required} bump to {fmt(expected)} is required")
    return verdict(False, f"{change}: the changes require a {required} bump, to {fmt(expected)}, not {fmt(new)}")
