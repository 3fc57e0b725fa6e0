"""Which runtimes run a package (issue 44, item 7): each supported torch release (pyproject.toml's
`torch` extra) with torch's own runner (`torch._inductor.aoti_load_package`), with
`es.cpp.AOTIRunner` and its C++ executor, and with that runner calling the Python executor
(`run_flat_with(es.ProxyExecutor(...).call_function, ...)`). `externspec check-spec --runtimes`
prints it, and docs/torch-compat.md's cross-version table is this function over the matrix's
packages (`python -m tests.support.matrix_table --write`), held to what the matrix measured by
tests/torch/test_runtimes.py.

Decided from what the package carries, as the runners decide it:
- the C-shim functions its model library imports (its ELF dynamic symbols), dated by the release
  that added them to libtorch (`RELEASE_NAMES`, the runner's table): an older torch lacks them, and
  externspec's runner refuses the package at load, torch's fails in `dlopen` (`undefined symbol`);
- its call layout (`abi.spec_layout`, the executors' decision from the wrapper's calls): torch's
  proxy executor reads the arrays as the node's arguments, so a package whose calls pass omitted
  kwarg-only defaults (OMITTED_DEFAULTS_PASSED, torch 2.11 to 2.14's wrappers) fails in every
  torch's runner: with an error, or, where its wrapper ignores the extern calls' status (2.11's and
  2.12's), without one and with outputs left unwritten. Both externspec executors read either layout;
  calls that fit no layout are refused by them at load.
Not seen here: a model that fails in its own generated code (the matrix's `KNOWN_FAILING`), and op
libraries, which every runtime needs loaded (`inspect` and `check-spec` list the namespaces).
"""

from __future__ import annotations

import fnmatch
import os
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass

from . import _torch_support, aoti, elf_symbols, package_layout
from ._generated.models import CallLayout
from .errors import SpecMismatchError
from .torch_releases import RELEASE_NAMES
from .wire import limits

# The runtimes, as check-spec --runtimes and the table name them.
RUNTIMES = {"torch": "torch's runner", "es.cpp": "es.cpp.AOTIRunner", "python": "Python executor"}

# Why a runtime does not run a package: kind -> the sentence (with the package's facts filled in).
REASONS = {
    "c_shim": "its model library calls C-shim functions that torch {needs} added ({functions}), which older releases "
              "lack: es.cpp.AOTIRunner refuses it at load (PackageError), torch's loader fails in dlopen",
    "omitted_defaults": "its calls pass omitted kwarg-only defaults in the arrays (call layout "
                        "OMITTED_DEFAULTS_PASSED), which torch's proxy executor does not expect: it raises "
                        "(`externspec upgrade --name-defaults` rewrites the package for it)",
    "omitted_defaults_silent": "its calls pass omitted kwarg-only defaults in the arrays (call layout "
                               "OMITTED_DEFAULTS_PASSED), which torch's proxy executor does not expect, and its "
                               "wrapper ignores the extern calls' status: the model runs on with outputs left "
                               "unwritten (None, or a later error; `externspec upgrade --name-defaults` rewrites the "
                               "package for it)",
    "layout_refused": "its calls fit no call layout of its nodes: {refusal}",
}
_MODEL_LIBRARY = package_layout.model_member("library")
_WRAPPER_SOURCE = package_layout.model_member("source")


@dataclass(frozen=True)
class PackageFacts:
    """What decides where a package runs: `needs` the oldest release whose libtorch has every dated
    C-shim function its libraries import (`functions`: those of that release; "" and () when none is
    dated), `layout` its call layout (None: no node's two layouts differ), `refusal` the executors'
    refusal of its calls (None: none), `checks_status` whether its wrapper checks each extern call's
    status (2.13 and later) or ignores it (2.11, 2.12)."""

    needs: str
    functions: tuple[str, ...]
    layout: CallLayout | None
    refusal: str | None
    checks_status: bool


@dataclass(frozen=True)
class Verdict:
    """One cell: whether `runtime` (a key of RUNTIMES) of torch `release` runs the package; `kind`, a
    key of REASONS, and `reason` say why not (both None when it runs)."""

    release: str
    runtime: str
    runs: bool
    kind: str | None = None
    reason: str | None = None


def _release_key(release: str) -> tuple[int, int]:
    return _torch_support.minor_release(release)


def _library_imports(archive: zipfile.ZipFile, info: zipfile.ZipInfo, label: str, budget: int) -> tuple[str, ...]:
    """What the model library member `info` imports: the member, bounded by `budget` (the runner's
    extraction budget) before a byte is inflated, inflated once into a temporary file with the checks
    of every member read (`aoti.copy_member`), and its tables read from there (elf_symbols.py)."""
    source = f"{label}!{info.filename}"
    with tempfile.TemporaryFile() as copy:
        length = aoti.copy_member(archive, info, budget, source, copy, limit_name="max_extracted_bytes")
        return elf_symbols.dynamic_symbols(copy, length, source).imported


def _dated_imports(archive: zipfile.ZipFile, label: str, package_bytes: int) -> tuple[str, tuple[str, ...]]:
    dated: dict[str, str] = {}
    budget = limits.extracted_budget(limits.Limits().max_extracted_bytes, package_bytes)
    for info in archive.infolist():
        if fnmatch.fnmatchcase(info.filename, _MODEL_LIBRARY):
            for name in _library_imports(archive, info, label, budget):
                if RELEASE_NAMES.get(name, ("", ""))[0] == "import":
                    dated[name] = RELEASE_NAMES[name][1]
    if not dated:
        return "", ()
    needs = max(dated.values(), key=_release_key)
    return needs, tuple(sorted(n for n, r in dated.items() if r == needs))


def package_facts(path: str) -> PackageFacts:
    """The facts of the package at `path` (its extern-kernel ops registered first, as check-spec
    requires: their layouts need their schemas). Raises PackageError (not a package) or the
    SpecMismatchError of a node whose op is not registered."""
    from .abi.spec_layout import spec_layout  # imports torch

    package = aoti.read_package(path)
    with zipfile.ZipFile(path) as archive:
        needs, functions = _dated_imports(archive, path, os.path.getsize(path))
        sources = [i for i in archive.infolist() if fnmatch.fnmatchcase(i.filename, _WRAPPER_SOURCE)]
        cpp = b"".join(aoti.read_member(archive, i, aoti.MAX_SOURCE_BYTES, f"{path}!{i.filename}",
                                        limit_name="max_source_bytes") for i in sources)
    decided = spec_layout(package.nodes, package.call_lengths)
    refused = [n for n in decided.nodes if isinstance(n, SpecMismatchError)]
    if refused:
        raise refused[0]
    calls = cpp.count(b"aoti_torch_proxy_executor_call_function(")
    checked = cpp.count(b"AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_proxy_executor_call_function(")
    return PackageFacts(needs, functions, decided.layout, str(decided.refused) if decided.refused else None,
                        checks_status=checked == calls)


def verdict(facts: PackageFacts, release: str, runtime: str) -> Verdict:
    """Whether `runtime` of torch `release` runs a package with `facts`, and why not."""
    if facts.needs and _release_key(facts.needs) > _release_key(release):
        return Verdict(release, runtime, False, "c_shim", REASONS["c_shim"].format(
            functions=", ".join(facts.functions), needs=facts.needs))
    if facts.refusal is not None:
        reason = REASONS["layout_refused"].format(refusal=facts.refusal)
        return Verdict(release, runtime, False, "layout_refused", reason)
    if runtime == "torch" and facts.layout == CallLayout.OMITTED_DEFAULTS_PASSED:
        kind = "omitted_defaults" if facts.checks_status else "omitted_defaults_silent"
        return Verdict(release, runtime, False, kind, REASONS[kind])
    return Verdict(release, runtime, True)


def supported_releases() -> list[str]:
    """The torch minor releases externspec supports (pyproject.toml's `torch` extra)."""
    return _torch_support.supported_releases(_torch_support.requirement())


def runtimes(path: str, releases: Sequence[str] | None = None) -> list[Verdict]:
    """Every supported release (or `releases`) by every runtime of RUNTIMES, for the package at `path`."""
    facts = package_facts(path)
    return [verdict(facts, r, rt) for r in releases or supported_releases() for rt in RUNTIMES]
