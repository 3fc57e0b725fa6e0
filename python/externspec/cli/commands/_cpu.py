"""What `inspect` and `check-spec --runtimes` say of the CPU a package was compiled for
(`externspec.cpu_isa`): its models' recorded ISA, and whether this machine runs it or why the
runner refuses it (issue 54 item 2). A field of the file's result, and one line of text."""

from __future__ import annotations

import zipfile
from typing import Any

from ... import cpu_isa, file_kind


def cpu_field(path: str) -> dict[str, Any] | None:
    """`{"models": [{"member", "machine", "isa"}], "host_isa", "refusal"}` for an AOTInductor package
    at `path`; None for any other file (a spec alone records no CPU). A metadata member that is not a
    JSON object of strings raises PackageError."""
    try:
        with zipfile.ZipFile(path) as archive:
            if file_kind.archive_kind(archive.namelist()) != "aoti_package":
                return None
            cpu = cpu_isa.package_cpu(archive, path)
    except (zipfile.BadZipFile, OSError):
        return None  # not a package: the document readers say what it is
    host = cpu_isa.host_cpu()
    return {"models": [{"member": m, "machine": machine, "isa": isa} for m, machine, isa in cpu.models],
            "host_isa": cpu_isa.host_isa(host), "refusal": cpu.refusal(host)}


def cpu_text(field: dict[str, Any]) -> str:
    """One line: the ISA each model was compiled for, and this machine's verdict."""
    isas = sorted({(m["isa"] or "no ISA recorded", m["machine"] or "no machine recorded") for m in field["models"]})
    compiled = "; ".join(f"{isa} ({machine})" for isa, machine in isas)
    verdict = "this machine runs it" if field["refusal"] is None else f"this machine refuses it: {field['refusal']}"
    return f"compiled for CPU ISA {compiled}: {verdict}"

