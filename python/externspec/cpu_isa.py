"""The CPU instructions a package's model library needs (issue 54 item 2). torch compiles a model
library for the vector ISA of the machine that compiles it and records that ISA in the package's
`*.wrapper_metadata.json` (`AOTI_MACHINE`, `AOTI_CPU_ISA`); on a CPU without those instructions the
library dies with SIGILL at its first run. The table of ISAs is `include/externspec/torch/cpu_isa.def`,
which the C++ runner (`cpp/csrc/aoti_package/cpu_isa.cpp`) #includes and refuses such a package by,
before the library is opened; this module reads the same table for the command line (`inspect` and
`check-spec --runtimes` show a package's ISA and whether this machine has it).
tests/aoti/test_cpu_isa.py runs one body over `refusal` and its C++ twin.

This machine is uname's machine, the CPU features Linux lists in /proc/cpuinfo (the features the
kernel has enabled), and `ATEN_CPU_CAPABILITY`, torch's cap on the capability a process uses."""

from __future__ import annotations

import fnmatch
import functools
import json
import os
import platform
import zipfile
from dataclasses import dataclass

from . import package_layout
from ._def_file import TORCH_DEF_DIR, entries
from .errors import PackageError
from .messages import message
from .wire.limits import SMALL_JSON_BYTES

__all__ = ["CAPABILITIES", "ISAS", "HostCpu", "IsaEntry", "PackageCpu", "host_cpu", "host_isa", "package_cpu",
           "refusal"]

ISA_FILE = TORCH_DEF_DIR / "cpu_isa.def"


@dataclass(frozen=True)
class IsaEntry:
    """A token of AOTI_CPU_ISA on packages of `machine`: the CPU features it needs and the ATen CPU
    capability it needs at least."""

    token: str
    machine: str
    capability: str
    features: tuple[str, ...]


def _read() -> tuple[tuple[IsaEntry, ...], dict[str, int]]:
    isas, capabilities = [], {}
    for where, macro, fields in entries(ISA_FILE):
        if macro == "ES_CPU_ISA":
            isas.append(IsaEntry(fields[0], fields[1], fields[2], tuple(fields[3].split())))
        elif macro == "ES_CPU_CAPABILITY":
            capabilities[fields[0]] = int(fields[1])
        else:
            raise ValueError(f"{where}: unknown entry {macro}")
    return tuple(isas), capabilities


ISAS, CAPABILITIES = _read()


@dataclass(frozen=True)
class HostCpu:
    """This machine as the check sees it: `features` None when they could not be read (`unread` says
    why); `capability` is ATEN_CPU_CAPABILITY ("" when unset)."""

    machine: str
    features: frozenset[str] | None
    unread: str = ""
    capability: str = ""


@functools.cache
def _features() -> tuple[frozenset[str] | None, str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, colon, value = line.partition(":")
                if colon and key.split() in (["flags"], ["Features"]):
                    return frozenset(value.split()), ""
    except OSError as e:
        return None, f"/proc/cpuinfo: {e.strerror}"
    return None, message("CPU_FEATURES_NOT_LISTED")


def host_cpu() -> HostCpu:
    """This machine: its CPU features read once per process, ATEN_CPU_CAPABILITY at each call."""
    features, unread = _features()
    return HostCpu(platform.machine(), features, unread, os.environ.get("ATEN_CPU_CAPABILITY", ""))


def _entry(token: str, machine: str) -> IsaEntry | None:
    return next((e for e in ISAS if e.token == token and e.machine == machine), None)


def _lacking(entry: IsaEntry, features: frozenset[str]) -> list[str]:
    return [f for f in entry.features if f not in features]


def _runs(entry: IsaEntry, host: HostCpu) -> bool:
    has = not entry.features or (host.features is not None and not _lacking(entry, host.features))
    cap = CAPABILITIES.get(host.capability)
    return has and (cap is None or CAPABILITIES[entry.capability] <= cap)


def refusal(machine: str, isa: str, host: HostCpu) -> str | None:
    """Why a package compiled for `machine` and `isa` (its AOTI_MACHINE and AOTI_CPU_ISA, "" when
    absent) cannot run on `host`, as the runner says it; None when it can, or when nothing is
    recorded or `host` is a machine the table does not list."""
    if machine and machine != host.machine:
        return message("CPU_ISA_OTHER_MACHINE", package_machine=machine, machine=host.machine)
    tokens = isa.split()
    if not tokens or not any(e.machine == host.machine for e in ISAS):
        return None
    found = [(t, _entry(t, host.machine)) for t in tokens]
    unknown = [t for t, e in found if e is None]
    if unknown:
        return message("CPU_ISA_UNKNOWN", isa=isa, unknown=" ".join(unknown), machine=host.machine)
    known = [e for _, e in found if e is not None]
    if any(e.features for e in known) and host.features is None:
        return message("CPU_ISA_UNREAD", isa=isa, reason=host.unread)
    missing = [f for e in known for f in _lacking(e, host.features or frozenset())]
    if missing:
        return message("CPU_ISA_LACKING", isa=isa, host_isa=host_isa(host), lacking=", ".join(missing))
    cap = CAPABILITIES.get(host.capability)
    capped = [e.token for e in known if cap is not None and CAPABILITIES[e.capability] > cap]
    if capped:
        return message("CPU_ISA_CAPPED", isa=isa, capability=host.capability, tokens=" ".join(capped))
    return None


def host_isa(host: HostCpu) -> str:
    """The table's tokens `host` runs, in the table's order ("INVALID_VEC_ISA AVX2")."""
    return " ".join(e.token for e in ISAS if e.machine == host.machine and _runs(e, host))


@dataclass(frozen=True)
class PackageCpu:
    """What a package's models record of the CPU they were compiled for (`*.wrapper_metadata.json`):
    per model library member, its AOTI_MACHINE and AOTI_CPU_ISA ("" when absent)."""

    models: tuple[tuple[str, str, str], ...]  # (library member, machine, isa)

    def refusal(self, host: HostCpu | None = None) -> str | None:
        """The first model's refusal on `host` (default: this machine), as `member: sentence`."""
        host = host or host_cpu()
        for member, machine, isa in self.models:
            if (why := refusal(machine, isa, host)) is not None:
                return f"{member}: {why}"
        return None


def package_cpu(archive: zipfile.ZipFile, label: str) -> PackageCpu:
    """The CPU each model of the open package `archive` (named `label` in messages) was compiled
    for. A metadata member is read within the runner's bound for it (`SMALL_JSON_BYTES`); one that is
    not a JSON object of strings is a PackageError naming it, as the runner refuses it."""
    from .aoti import read_member  # aoti reads members for every Python reader

    infos = {i.filename: i for i in archive.infolist()}
    models = []
    for name in sorted(n for n in infos if fnmatch.fnmatchcase(n, package_layout.model_member("library"))):
        meta_name = package_layout.sibling(name, "metadata", of="library")
        fields: dict[str, str] = {}
        if meta_name in infos:
            source = f"{label}!{meta_name}"
            data = read_member(archive, infos[meta_name], SMALL_JSON_BYTES, source, limit_name="small_json_bytes")
            fields = _string_object(data, source)
        models.append((name, fields.get("AOTI_MACHINE", ""), fields.get("AOTI_CPU_ISA", "")))
    return PackageCpu(tuple(models))


def _string_object(data: bytes, source: str) -> dict[str, str]:
    """A JSON object of strings, each key once (the runner's string_object), else a PackageError."""
    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        keys = [k for k, _ in items]
        if len(set(keys)) != len(keys):
            raise PackageError(f"the key `{next(k for k in keys if keys.count(k) > 1)}` is given twice", source=source)
        return dict(items)

    try:
        value = json.loads(data, object_pairs_hook=pairs)
    except (ValueError, RecursionError) as e:
        raise PackageError(f"not JSON ({e}): a package's metadata is a JSON object of strings", source=source) from None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise PackageError("a package's metadata is a JSON object of strings", source=source)
    return value
