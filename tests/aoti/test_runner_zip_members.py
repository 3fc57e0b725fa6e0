"""The runner on a package's zip members: names escaping the package (the library outside it was
dlopen'ed), names twice or not UTF-8, sizes and CRC-32s that lie, members missing or damaged, the
extraction bound, the zip64 end record; each refused naming the member, before anything is written.

Slow: compiles small models (cached)."""

from __future__ import annotations

import re
import struct
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import externspec as es
from tests.support import cpp_models as cm
from tests.support.package_edits import (
    record_size,
    rename_library,
    rewrite,
    rewrite_deflated,
)

# Every test: no directory the runner extracted outlives what made it (success or failure).
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("extraction_root")]

MODEL = cm.MODELS["runner"]


def _mapped_files() -> set[str]:
    with open("/proc/self/maps") as f:
        return {line.split(maxsplit=5)[5].strip() for line in f if len(line.split(maxsplit=5)) == 6}


@pytest.mark.parametrize(("new_name", "match"), [
    (lambda n: n.replace("/data/aotinductor/model/", "/data/aotinductor/model/../../../../x/"),
     r"member `data/aotinductor/model/\.\./\.\./\.\./\.\./x/\w+\.wrapper\.so` has a `\.` or `\.\.` path component"),
    (lambda n: n.replace("/data/aotinductor/model/", "/data/aotinductor/model/./"),
     r"member `data/aotinductor/model/\./\w+\.wrapper\.so` has a `\.` or `\.\.` path component"),
    (lambda n: n.replace("/data/aotinductor/model/", "/data/aotinductor/model//"), r"has an empty path component"),
    (lambda n: "/abs/path/" + n, r"member `/abs/path/.*\.wrapper\.so` is absolute"),
], ids=["dotdot", "dot", "empty-component", "absolute"])
def test_member_names_escaping_the_package_are_refused_before_anything_is_written(
        blob_package: Path, tmp_path: Path, new_name: Callable[[str], str], match: str) -> None:
    hostile = rewrite(blob_package, tmp_path / "hostile.pt2", rename_library(new_name))
    es.cpp.extension()
    mapped = _mapped_files()
    with pytest.raises(es.PackageError, match=match):
        es.cpp.AOTIRunner(hostile)
    assert _mapped_files() == mapped  # nothing dlopen'ed
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["hostile.pt2"]  # nothing written beside it


def test_a_blob_package_without_its_blob_is_refused_not_run(blob_package: Path, tmp_path: Path) -> None:
    stripped = rewrite(blob_package, tmp_path / "stripped.pt2",
                        lambda name, data: None if name.endswith(".blob") else (name, data))
    with pytest.raises(es.PackageError, match=r"weights are not loaded: it keeps \d+ constants outside its library"):
        es.cpp.AOTIRunner(stripped)
    short = rewrite(blob_package, tmp_path / "short.pt2",
                     lambda name, data: (name, data[: len(data) // 2] if name.endswith(".blob") else data))
    with pytest.raises(es.PackageError, match=r"\.wrapper_weights\.blob: \d+ bytes, the model's weights take \d+"):
        es.cpp.AOTIRunner(short)


def test_extraction_and_source_reads_are_bounded(blob_package: Path) -> None:
    with pytest.raises(es.PackageError, match=r"\.wrapper\.so: \d+ bytes would take the extracted size over the "
                                              r"limit of 1000 bytes"):
        es.cpp.AOTIRunner(blob_package, limits=es.Limits.current(max_extracted_bytes=1000))
    with pytest.raises(es.PackageError, match=r"\.wrapper\.cpp: \d+ bytes, over the limit of 100 bytes"):
        es.cpp.AOTIRunner(blob_package, limits=es.Limits.current(max_source_bytes=100))


def test_no_such_model_names_the_models_there(blob_package: Path) -> None:
    with pytest.raises(es.PackageError, match=r"expected one data/aotinductor/other/\*\.wrapper\.so, found 0 "
                                              r"\(models in the package: `model`\)"):
        es.cpp.AOTIRunner(blob_package, model_name="other")
    with pytest.raises(es.PackageError, match=r"model name `\.\.` is not a plain folder name"):
        es.cpp.AOTIRunner(blob_package, model_name="..")


def test_a_member_name_that_is_not_utf8_keeps_every_error_class(blob_package: Path, tmp_path: Path) -> None:
    """A byte that is not UTF-8 in the model's member names (raw in the zip: no UTF-8 flag) reaches
    Python as `\\xff` in the message; the error keeps its class (it was UnicodeDecodeError from
    pybind's str conversion, so `except es.CallError` caught nothing: issue 26, item 11)."""
    def with_raw_ff(name: str, drop_source: bool = False) -> Path:
        marked = rewrite(blob_package, tmp_path / f"marked-{name}",
                          lambda member, data: None if drop_source and member.endswith(".wrapper.cpp")
                          else (member.replace(".wrapper", "QQQQ.wrapper"), data))
        raw = marked.read_bytes()
        assert raw.count(b"QQQQ.wrapper") >= 4  # each name in its local header and in the central directory
        (tmp_path / name).write_bytes(raw.replace(b"QQQQ.wrapper", b"QQQ\xff.wrapper"))
        return tmp_path / name

    hostile = with_raw_ff("hostile.pt2")
    with pytest.raises(es.PackageError, match=r"QQQ\\xff\.wrapper\.cpp: \d+ bytes, over the limit of 100 bytes"):
        es.cpp.AOTIRunner(hostile, limits=es.Limits.current(max_source_bytes=100))
    # The load's warnings too (torch's warning handler decoded them strictly).
    with pytest.warns(UserWarning, match=r"QQQ\\xff\.wrapper\.so: .*records no dtype or shape"):
        es.cpp.AOTIRunner(with_raw_ff("nosource.pt2", drop_source=True))
    runner = es.cpp.AOTIRunner(hostile)
    x, _ = MODEL.inputs(4)
    with pytest.raises(es.CallError, match=r"QQQ\\xff\.wrapper\.so: input 0 has dtype Double"):
        runner(x.double(), torch.tensor(3))
    with pytest.raises(es.ModelError, match=r"QQQ\\xff\.wrapper\.so: the model failed: Expected u0 >= 3"):
        runner(x, torch.tensor(1))
    torch.testing.assert_close(runner(x, torch.tensor(3))[0], x.sin())


# The runner model has no extern calls (no *.wrapper.json): the ABI model has.
_MEMBERS = [("runner_blob", ".wrapper.so"), ("runner_blob", ".wrapper_weights.blob"), ("runner_blob", ".wrapper.cpp"),
            ("abi", ".wrapper.json")]


@pytest.mark.parametrize(("name", "suffix"), _MEMBERS, ids=[s for _, s in _MEMBERS])
def test_a_member_shorter_than_its_data_is_refused_naming_it(tmp_path: Path, name: str, suffix: str) -> None:
    """The library was extracted cut short (its size and CRC never checked): dlopen died with
    SIGBUS and left its temporary directory behind."""
    out = rewrite(cm.package(name), tmp_path / "short.pt2", lambda name, d: (name, d))
    with zipfile.ZipFile(out) as z:
        size = next(i.file_size for i in z.infolist() if i.filename.endswith(suffix))
    record_size(out, suffix, size // 2)
    with pytest.raises(es.PackageError, match=re.escape(suffix) + r": its bytes do not match the CRC-32"):
        es.cpp.AOTIRunner(out)


@pytest.mark.parametrize(("name", "suffix"), _MEMBERS, ids=[s for _, s in _MEMBERS])
def test_a_member_recorded_twice_is_refused_naming_it(tmp_path: Path, name: str, suffix: str) -> None:
    """Which copy was used depended on the zip library (the first JSON, the last blob)."""
    out = tmp_path / "twice.pt2"
    with zipfile.ZipFile(cm.package(name)) as src, zipfile.ZipFile(out, "w") as dst, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile's "Duplicate name"
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))
            if info.filename.endswith(suffix):
                dst.writestr(info.filename, src.read(info.filename))
    with pytest.raises(es.PackageError, match=r"member `[^`]*" + re.escape(suffix) + r"` appears more than once"):
        es.cpp.AOTIRunner(out)


def test_a_member_torchs_reader_inflates_as_it_opens_is_bounded_first(blob_package: Path, tmp_path: Path) -> None:
    # torch's reader inflated `.data/version` whole while opening: 512 MiB (0.5 MB deflated) cost +1 GB.
    version = rewrite_deflated(blob_package, tmp_path / "version.pt2", "/.data/version", b"0" * (64 << 20))
    with pytest.raises(es.PackageError, match=r"member `\.data/version` records 67108864 bytes, over the "
                                              r"limit of 4096 bytes for a member torch's zip reader reads"):
        es.cpp.AOTIRunner(version)


def test_a_package_whose_end_record_defers_to_zip64_loads(blob_package: Path, tmp_path: Path) -> None:
    """torch writes a zip64 end record beside the plain one; with the plain one's counts and
    offsets saturated, both readers (the runner's directory check, then torch's) take zip64's."""
    raw = bytearray(blob_package.read_bytes())
    eocd = raw.rfind(b"PK\x05\x06")
    assert raw.rfind(b"PK\x06\x06") != -1
    struct.pack_into("<HHII", raw, eocd + 8, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF)
    out = tmp_path / "zip64.pt2"
    out.write_bytes(bytes(raw))
    x, n = MODEL.inputs(4)
    torch.testing.assert_close(es.cpp.AOTIRunner(out)(x, n)[0], x.sin())


_MEMBER_KINDS = (".wrapper.so", ".wrapper.cpp", ".wrapper.json", "_metadata.json", ".wrapper_weights.blob")


@pytest.mark.filterwarnings("ignore:.*records no dtype or shape:UserWarning")  # a source replaced by junk
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_damaged_package_loads_or_is_refused_with_externspecs_errors(blob_package: Path, tmp_path: Path,
                                                                       data: st.DataObject) -> None:
    """The whole class of item 11: any member replaced by junk (a non-ELF library, bad UTF-8 or
    a 5000-digit number in the JSON, an empty or missing source), dropped, or the archive cut or
    with a flipped byte outside the library's bytes (a damaged ELF is trusted code, like any
    library one dlopens), gives a working runner or an externspec error, never another exception."""
    raw = blob_package.read_bytes()
    edit = data.draw(st.sampled_from(["replace", "drop", "cut", "flip"]))
    out = tmp_path / "damaged.pt2"
    if edit in ("replace", "drop"):
        kind = data.draw(st.sampled_from(_MEMBER_KINDS))
        junk = data.draw(st.sampled_from([b"", b"\xff\xfe junk", b"\x7fELF" + bytes(60), b"9" * 5000,
                                          b'{"nodes": [' * 40, b"{}"]) | st.binary(max_size=256))
        rewrite(blob_package, out, lambda name, d: (None if edit == "drop" else (name, junk))
                 if name.endswith(kind) else (name, d))
    else:
        with zipfile.ZipFile(blob_package) as z:
            so = next(i for i in z.infolist() if i.filename.endswith(".wrapper.so"))
        # The library's bytes as stored: its local header (30 bytes, then name and extra field,
        # whose lengths are at offsets 26 and 28) and its data.
        name_len, extra_len = struct.unpack_from("<HH", raw, so.header_offset + 26)
        library = range(so.header_offset, so.header_offset + 30 + name_len + extra_len + so.compress_size)
        where = data.draw(st.integers(0, len(raw) - 1).filter(lambda i: i not in library))
        damaged = raw[:where] if edit == "cut" else raw[:where] + bytes([raw[where] ^ 0xFF]) + raw[where + 1:]
        out.write_bytes(damaged)
    try:
        runner = es.cpp.AOTIRunner(out)
        inputs = MODEL.inputs(4)
        runner(*inputs)
    except es.ExternSpecError:
        pass
