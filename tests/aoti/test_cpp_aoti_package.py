"""The C++ package runner on what torch's own loader survives and what it must refuse: aliased,
repeated and view outputs (SIGABRT, double free, before), weights in an external blob (SIGSEGV),
member names escaping the package (the library outside it was dlopen'ed), the model's own check
(its message was lost), inputs of the wrong dtype/rank/size/strides/device (silent garbage or
reads past the buffer), and temporary directories left behind.

Slow: compiles one small model twice (weights in the library, weights in a blob), cached."""

from __future__ import annotations

import re
import shutil
import struct
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import externspec as es
from externspec import _torch_support
from tests.support import cpp_models as cm
from tests.support.artifacts import read_member

# Every test: no directory the runner extracted outlives what made it (success or failure).
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("extraction_root")]

MODEL = cm.MODELS["runner"]


def _mapped_files() -> set[str]:
    with open("/proc/self/maps") as f:
        return {line.split(maxsplit=5)[5].strip() for line in f if len(line.split(maxsplit=5)) == 6}


@pytest.fixture(scope="session", params=["runner", "runner_blob"], ids=["weights-in-library", "weights-in-blob"])
def package(request: pytest.FixtureRequest) -> Path:
    return cm.package(request.param)


@pytest.fixture(scope="session")
def blob_package() -> Path:
    return cm.package("runner_blob")


@pytest.fixture(scope="session")
def runner(blob_package: Path) -> es.cpp.AOTIRunner:
    return es.cpp.AOTIRunner(blob_package)


# The "input" records as torch 2.11 and 2.12 write them: no `assert_size_stride(VAR, ..., "input")`
# line, only the wrapper's `check_input_N` and the symbols its run_impl binds (docs/torch-compat.md).
_INPUT_ASSERT = re.compile(rb'^.*assert_size_stride\(\w+, .*, "input"\);.*\n', re.MULTILINE)


def _as_torch_2_11_writes(name: str, data: bytes) -> tuple[str, bytes]:
    return name, _INPUT_ASSERT.sub(b"", data) if name.endswith(".wrapper.cpp") else data


@pytest.fixture(scope="module", params=["assert_size_stride", "check_input"])
def recorded_runner(request: pytest.FixtureRequest, blob_package: Path,
                    tmp_path_factory: pytest.TempPathFactory) -> es.cpp.AOTIRunner:
    """The blob package's runner, its inputs recorded as torch 2.13 writes them and as 2.11 does."""
    if request.param == "assert_size_stride":
        return es.cpp.AOTIRunner(blob_package, require_input_records=True)
    out = _rewrite(blob_package, tmp_path_factory.mktemp("records") / "check_input.pt2", _as_torch_2_11_writes)
    assert not _INPUT_ASSERT.search(read_member(out, ".wrapper.cpp"))
    return es.cpp.AOTIRunner(out, require_input_records=True)


def test_aliased_repeated_and_view_outputs_match_torchs_loader_and_eager(package: Path) -> None:
    ours = es.cpp.AOTIRunner(package)
    theirs = torch._inductor.aoti_load_package(str(package))
    for n in (2, 5, 64):
        inputs = MODEL.inputs(n)
        got, want, eager = ours(*inputs), theirs(*inputs), MODEL.module(*inputs)
        assert len(got) == len(want) == len(eager) == 4
        for i, (g, w, e) in enumerate(zip(got, want, eager, strict=True)):
            assert g.shape == w.shape == e.shape, f"output {i}"
            assert torch.equal(g, w), f"output {i}"
            torch.testing.assert_close(g, e, msg=f"output {i}")
        assert got[0] is got[1]  # `return y, y`: one tensor, owned once
    ours.close()


def test_a_blob_package_keeps_its_weights_beside_the_library(blob_package: Path) -> None:
    names = zipfile.ZipFile(blob_package).namelist()
    assert [n for n in names if n.endswith(".wrapper_weights.blob")]


def _rewrite(package: Path, out: Path, edit: Callable[[str, bytes], tuple[str, bytes] | None]) -> Path:
    """A copy of `package` with each member passed through `edit(name, data)` (None drops it)."""
    with zipfile.ZipFile(package) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            item = edit(info.filename, src.read(info.filename))
            if item is not None:
                dst.writestr(item[0], item[1])
    return out


def _rename_library(new: Callable[[str], str]) -> Callable[[str, bytes], tuple[str, bytes]]:
    return lambda name, data: (new(name) if name.endswith(".wrapper.so") else name, data)


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
    hostile = _rewrite(blob_package, tmp_path / "hostile.pt2", _rename_library(new_name))
    es.cpp.extension()
    mapped = _mapped_files()
    with pytest.raises(es.PackageError, match=match):
        es.cpp.AOTIRunner(hostile)
    assert _mapped_files() == mapped  # nothing dlopen'ed
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["hostile.pt2"]  # nothing written beside it


def test_a_blob_package_without_its_blob_is_refused_not_run(blob_package: Path, tmp_path: Path) -> None:
    stripped = _rewrite(blob_package, tmp_path / "stripped.pt2",
                        lambda name, data: None if name.endswith(".blob") else (name, data))
    with pytest.raises(es.PackageError, match=r"weights are not loaded: it keeps \d+ constants outside its library"):
        es.cpp.AOTIRunner(stripped)
    short = _rewrite(blob_package, tmp_path / "short.pt2",
                     lambda name, data: (name, data[: len(data) // 2] if name.endswith(".blob") else data))
    with pytest.raises(es.PackageError, match=r"\.wrapper_weights\.blob: \d+ bytes, the model's weights take \d+"):
        es.cpp.AOTIRunner(short)


def test_extraction_and_source_reads_are_bounded(blob_package: Path) -> None:
    with pytest.raises(es.PackageError, match=r"\.wrapper\.so: \d+ bytes would take the extracted size over the "
                                              r"limit of 1000 bytes"):
        es.cpp.AOTIRunner(blob_package, max_extracted_bytes=1000)
    with pytest.raises(es.PackageError, match=r"\.wrapper\.cpp: \d+ bytes, over the limit of 100 bytes"):
        es.cpp.AOTIRunner(blob_package, max_source_bytes=100)


def test_no_such_model_names_the_models_there(blob_package: Path) -> None:
    with pytest.raises(es.PackageError, match=r"expected one data/aotinductor/other/\*\.wrapper\.so, found 0 "
                                              r"\(models in the package: `model`\)"):
        es.cpp.AOTIRunner(blob_package, model_name="other")
    with pytest.raises(es.PackageError, match=r"model name `\.\.` is not a plain folder name"):
        es.cpp.AOTIRunner(blob_package, model_name="..")


def test_hostile_wrapper_source_is_read_in_linear_time(blob_package: Path, tmp_path: Path) -> None:
    # 7 MB that the former regexes took ~25 min over (each match attempt rescanned to the end).
    junk = ("assert_size_stride(a, {" * 150_000 + "\n" + "auto v = std::move(inputs[" * 150_000).encode()
    edited = _rewrite(blob_package, tmp_path / "junk.pt2",
                      lambda name, data: (name, data + junk if name.endswith(".wrapper.cpp") else data))
    runner = es.cpp.AOTIRunner(edited)
    inputs = MODEL.inputs(3)
    torch.testing.assert_close(runner(*inputs)[3], MODEL.module(*inputs)[3])


def test_a_member_name_that_is_not_utf8_keeps_every_error_class(blob_package: Path, tmp_path: Path) -> None:
    """A byte that is not UTF-8 in the model's member names (raw in the zip: no UTF-8 flag) reaches
    Python as `\\xff` in the message; the error keeps its class (it was UnicodeDecodeError from
    pybind's str conversion, so `except es.CallError` caught nothing: issue 26, item 11)."""
    def with_raw_ff(name: str, drop_source: bool = False) -> Path:
        marked = _rewrite(blob_package, tmp_path / f"marked-{name}",
                          lambda member, data: None if drop_source and member.endswith(".wrapper.cpp")
                          else (member.replace(".wrapper", "QQQQ.wrapper"), data))
        raw = marked.read_bytes()
        assert raw.count(b"QQQQ.wrapper") >= 4  # each name in its local header and in the central directory
        (tmp_path / name).write_bytes(raw.replace(b"QQQQ.wrapper", b"QQQ\xff.wrapper"))
        return tmp_path / name

    hostile = with_raw_ff("hostile.pt2")
    with pytest.raises(es.PackageError, match=r"QQQ\\xff\.wrapper\.cpp: \d+ bytes, over the limit of 100 bytes"):
        es.cpp.AOTIRunner(hostile, max_source_bytes=100)
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


def test_a_closed_runner_refuses_every_call_saying_it_is_closed(blob_package: Path) -> None:
    """Issue 36, item 9: after close() every call raised AttributeError ('NoneType' ... 'run_flat')."""
    runner = es.cpp.AOTIRunner(blob_package)
    runner.close()
    x, n = MODEL.inputs(4)
    for call in [lambda: runner(x, n), lambda: runner.run_flat([x, n]), lambda: runner.num_inputs,
                 lambda: runner.device, lambda: runner.run_flat_with(lambda *a: None, [x, n])]:
        with pytest.raises(es.CallError, match=r"runner_blob.*: the runner is closed \(AOTIRunner\.close\(\)"):
            call()


def test_the_models_own_check_raises_its_message(runner: es.cpp.AOTIRunner) -> None:
    x, _ = MODEL.inputs(4)
    with pytest.raises(es.ModelError, match=r"the model failed: Expected u0 >= 3 but received 1"):
        runner(x, torch.tensor(1))
    torch.testing.assert_close(runner(x, torch.tensor(3))[0], x.sin())  # still usable


def _x(n: int = 4) -> torch.Tensor:
    return MODEL.inputs(n)[0]


N = torch.tensor(3)


@pytest.mark.parametrize(("inputs", "match"), [
    (lambda: (_x().double(), N), r"input 0 has dtype Double, the model was compiled for Float"),
    (lambda: (_x().long(), N), r"input 0 has dtype Long, the model was compiled for Float"),
    # int8 for float32: the kernel would read 4x past the buffer
    (lambda: (_x().to(torch.int8), N), r"input 0 has dtype Char, the model was compiled for Float"),
    (lambda: (_x(), N.int()), r"input 1 has dtype Int, the model was compiled for Long"),
    (lambda: (_x()[None], N), r"input 0 has shape \[1, 4, 4\], the model was compiled for \[\*, 4\]"),
    (lambda: (_x(), N[None]), r"input 1 has shape \[1\], the model was compiled for \[\]"),
    (lambda: (torch.randn(4, 3), N), r"input 0 has shape \[4, 3\], the model was compiled for \[\*, 4\]"),
    (lambda: (torch.randn(65, 4), N), r"input 0 has shape \[65, 4\]: size 0 must be at most 64"),
    (lambda: (torch.randn(4, 4).t(), N),
     r"input 0 has strides \[1, 4\], the model was compiled for strides \[4, 1\] \(call \.contiguous\(\) on it\)"),
    (lambda: (torch.randn(4, 1).expand(4, 4), N), r"input 0 has strides \[1, 0\], .* strides \[4, 1\]"),
    (lambda: (torch.randn(8, 8)[::2, ::2], N), r"input 0 has strides \[16, 2\], .* strides \[4, 1\]"),
    (lambda: (torch.empty(4, 4, device="meta"), N), r"input 0 is on meta, the model runs on cpu"),
    (lambda: (_x().to_sparse(), N), r"input 0 has layout Sparse, the model takes strided tensors"),
    (lambda: (torch._neg_view(_x()), N), r"input 0 is a lazy conjugate or negative view"),
    (lambda: (_x(),), r"the model takes 2 inputs, got 1"),
], ids=["float64", "int64", "int8", "int32-for-int64", "rank", "rank-0", "static-size",
        "above-range", "transposed", "stride-0", "strided-view", "meta", "sparse", "neg-view", "count"])
def test_inputs_that_do_not_match_the_package_are_refused_naming_the_input(
        recorded_runner: es.cpp.AOTIRunner, inputs: Callable[[], tuple[Any, ...]], match: str) -> None:
    with pytest.raises(es.CallError, match=match):
        recorded_runner.run_flat(list(inputs()))
    x, n = MODEL.inputs(5)
    torch.testing.assert_close(recorded_runner(x, n)[0], x.sin())


def test_without_lower_bound_checks_a_dynamic_models_check_lines_record_no_rank(blob_package: Path,
                                                                                tmp_path: Path) -> None:
    """Compiled with `aot_inductor.check_lowerbound=False`, a dynamic size without an upper bound
    has no check line, so the lines that are there may not name every dimension: no rank is taken
    from them (torch 2.11's layout, its lower-bound lines removed too)."""
    def edit(name: str, data: bytes) -> tuple[str, bytes]:
        name, data = _as_torch_2_11_writes(name, data)
        return name, re.sub(rb"if \(\w+_size\[\d+\] < \d+\) \{", b"if (false) {", data)

    out = _rewrite(blob_package, tmp_path / "no_lower_bound.pt2", edit)
    with pytest.warns(UserWarning, match=r"records no dtype or shape for input 0, input 1 in its \*\.wrapper\.cpp"):
        runner = es.cpp.AOTIRunner(out)
    x, n = MODEL.inputs(4)
    torch.testing.assert_close(runner(x, n)[0], x.sin())


def test_run_flat_takes_any_sequence_and_names_what_is_not_a_tensor(runner: es.cpp.AOTIRunner) -> None:
    x = _x()
    for inputs in ([x, N], (x, N)):
        torch.testing.assert_close(runner.run_flat(inputs)[0], x.sin())
    with pytest.raises(TypeError, match=r"inputs\[1\] must be a Tensor, got int"):
        runner.run_flat([x, 3])
    with pytest.raises(TypeError, match=r"inputs must be a sequence of tensors"):
        runner.run_flat(x.sin)  # type: ignore[arg-type]


def test_views_with_the_compiled_strides_run(runner: es.cpp.AOTIRunner) -> None:
    # A slice of rows keeps the compiled strides: not a copy, and not refused.
    base = torch.randn(10, 4)
    for x in (base[2:5], torch.randn(4, 8)[:, :4].contiguous(), torch.randn(2, 1, 4)[:, 0]):
        torch.testing.assert_close(runner(x, N)[3], MODEL.module(x, N)[3])


def test_a_copied_package_loads_beside_the_first(runner: es.cpp.AOTIRunner, blob_package: Path,
                                                 tmp_path: Path) -> None:
    other = es.cpp.AOTIRunner(shutil.copy(blob_package, tmp_path / "copy.pt2"))
    x = _x(6)
    assert torch.equal(other(x, N)[3], runner(x, N)[3])


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
        _rewrite(blob_package, out, lambda name, d: (None if edit == "drop" else (name, junk))
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


@pytest.mark.parametrize(("metadata", "match"), [
    (b"", r"not a JSON object"),
    (b"\xff\xfe junk", r"not a JSON object"),
    (b'["cpu"]', r"not a JSON object"),
    (b'{"AOTI_DEVICE_KEY": 1}', r"the value of `AOTI_DEVICE_KEY` is a JSON int, not a string"),
    (b'{"AOTI_DEVICE_KEY": "cpu", "y": {}}', r"the value of `y` is a JSON object, not a string"),
])
def test_package_metadata_is_read_as_torch_writes_it_or_refused(blob_package: Path, tmp_path: Path,
                                                               metadata: bytes, match: str) -> None:
    """The metadata was skimmed for its device key by a string search: junk loaded silently, and a
    key inside another value was taken for it."""
    out = _rewrite(blob_package, tmp_path / "metadata.pt2",
                   lambda name, d: (name, metadata if name.endswith(".wrapper_metadata.json") else d))
    with pytest.raises(es.PackageError, match=r"wrapper_metadata\.json: " + match):
        es.cpp.AOTIRunner(out)


def test_a_device_key_inside_another_value_is_not_the_device_key(blob_package: Path, tmp_path: Path) -> None:
    metadata = b'{"note": "\\"AOTI_DEVICE_KEY\\": \\"cuda\\"", "AOTI_DEVICE_KEY": "cpu"}'
    out = _rewrite(blob_package, tmp_path / "metadata.pt2",
                   lambda name, d: (name, metadata if name.endswith(".wrapper_metadata.json") else d))
    x, n = MODEL.inputs(4)
    torch.testing.assert_close(es.cpp.AOTIRunner(out)(x, n)[0], x.sin())


# Issue 26: every member bounded and verified before use; one bounded JSON reader; inputs the
# kernels cannot read; the library mapped once; the model's and ATen's messages.

def _rewrite_deflated(package: Path, out: Path, suffix: str, data: bytes) -> Path:
    """A copy of `package` whose member ending in `suffix` holds `data`, deflated (a small
    member that inflates to `len(data)` bytes)."""
    with zipfile.ZipFile(package) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            if info.filename.endswith(suffix):
                dst.writestr(info.filename, data, compress_type=zipfile.ZIP_DEFLATED)
            else:
                dst.writestr(info.filename, src.read(info.filename))
    return out


def _record_size(path: Path, suffix: str, size: int) -> None:
    """Records `size` as the stored size of the member ending in `suffix`, in its local header and
    its central-directory entry, leaving its bytes and CRC-32 as they were (a member whose
    recorded size is shorter than its data)."""
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = next(i for i in z.infolist() if i.filename.endswith(suffix))
        pos = z.start_dir  # type: ignore[attr-defined]
    struct.pack_into("<II", raw, info.header_offset + 18, size, size)
    while raw[pos:pos + 4] == b"PK\x01\x02":
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", raw, pos + 28)
        if raw[pos + 46:pos + 46 + name_len].decode().endswith(suffix):
            struct.pack_into("<II", raw, pos + 20, size, size)
        pos += 46 + name_len + extra_len + comment_len
    path.write_bytes(bytes(raw))


def test_metadata_is_read_with_the_bounded_json_reader(blob_package: Path, tmp_path: Path) -> None:
    # 16 MiB of `[` deflate to 16 KB: nlohmann's DOM took +1.24 GB before any type check.
    big = _rewrite_deflated(blob_package, tmp_path / "big.pt2", ".wrapper_metadata.json", b"[" * (16 << 20))
    with pytest.raises(es.PackageError, match=r"wrapper_metadata\.json: 16777216 bytes, over the limit of 1048576"):
        es.cpp.AOTIRunner(big)
    deep = _rewrite_deflated(blob_package, tmp_path / "deep.pt2", ".wrapper_metadata.json", b"[" * 1000)
    with pytest.raises(es.PackageError, match=rf"wrapper_metadata\.json: not a JSON object.*nesting deeper than "
                                              rf"{es.MAX_JSON_DEPTH} levels"):
        es.cpp.AOTIRunner(deep)
    twice = _rewrite(blob_package, tmp_path / "twice.pt2", lambda name, d: (name, b'{"AOTI_DEVICE_KEY": "cpu", '
                     b'"AOTI_DEVICE_KEY": "cuda"}' if name.endswith(".wrapper_metadata.json") else d))
    with pytest.raises(es.PackageError, match=r"key `AOTI_DEVICE_KEY` appears more than once"):
        es.cpp.AOTIRunner(twice)


def _add_deflated(package: Path, out: Path, member: str, data: bytes) -> Path:
    """A copy of `package` with `member` (a name inside its top folder) added, holding `data` deflated."""
    shutil.copy(package, out)
    with zipfile.ZipFile(out, "a") as z:
        top = z.namelist()[0].split("/")[0]
        z.writestr(f"{top}/{member}", data, compress_type=zipfile.ZIP_DEFLATED)
    return out


def test_the_torchbind_object_list_is_read_with_the_bounded_json_reader(blob_package: Path, tmp_path: Path) -> None:
    """Issue 36, item 3: `custom_objs_config.json` is read on every load, opt-in or not; 16 MiB of
    `[` (16 KB deflated) in a package without torchbind objects cost +1231 MiB in nlohmann's DOM."""
    config = "data/aotinductor/model/custom_objs_config.json"
    big = _add_deflated(blob_package, tmp_path / "big.pt2", config, b"[" * (2 << 20))
    with pytest.raises(es.PackageError, match=r"custom_objs_config\.json: 2097152 bytes, over the limit of 1048576"):
        es.cpp.AOTIRunner(big)
    deep = _add_deflated(blob_package, tmp_path / "deep.pt2", config, b"[" * 1000)
    with pytest.raises(es.PackageError, match=rf"custom_objs_config\.json: not a JSON object \(torch's list of a "
                                              rf"model's torchbind objects is .*nesting deeper than "
                                              rf"{es.MAX_JSON_DEPTH} levels"):
        es.cpp.AOTIRunner(deep)
    twice = _add_deflated(blob_package, tmp_path / "twice.pt2", config, b'{"a": "x", "a": "y"}')
    with pytest.raises(es.PackageError, match=r"custom_objs_config\.json: key `a` appears more than once"):
        es.cpp.AOTIRunner(twice)


def test_a_member_torchs_reader_inflates_as_it_opens_is_bounded_first(blob_package: Path, tmp_path: Path) -> None:
    # torch's reader inflated `.data/version` whole while opening: 512 MiB (0.5 MB deflated) cost +1 GB.
    version = _rewrite_deflated(blob_package, tmp_path / "version.pt2", "/.data/version", b"0" * (64 << 20))
    with pytest.raises(es.PackageError, match=r"member `\.data/version` records 67108864 bytes, over the "
                                              r"limit of 4096 bytes for a member torch's zip reader reads"):
        es.cpp.AOTIRunner(version)


# The runner model has no extern calls (no *.wrapper.json): the ABI model has.
_MEMBERS = [("runner_blob", ".wrapper.so"), ("runner_blob", ".wrapper_weights.blob"), ("runner_blob", ".wrapper.cpp"),
            ("abi", ".wrapper.json")]


@pytest.mark.parametrize(("name", "suffix"), _MEMBERS, ids=[s for _, s in _MEMBERS])
def test_a_member_shorter_than_its_data_is_refused_naming_it(tmp_path: Path, name: str, suffix: str) -> None:
    """The library was extracted cut short (its size and CRC never checked): dlopen died with
    SIGBUS and left its temporary directory behind."""
    out = _rewrite(cm.package(name), tmp_path / "short.pt2", lambda name, d: (name, d))
    with zipfile.ZipFile(out) as z:
        size = next(i.file_size for i in z.infolist() if i.filename.endswith(suffix))
    _record_size(out, suffix, size // 2)
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


def test_a_huge_recorded_shape_is_refused_before_it_is_kept(blob_package: Path, tmp_path: Path) -> None:
    # A 60 MiB `assert_size_stride` line of one-character sizes cost +1.1 GB before dlopen.
    with zipfile.ZipFile(blob_package) as z:
        source = z.read(next(n for n in z.namelist() if n.endswith(".wrapper.cpp"))).decode()
    var = re.search(r"assert_size_stride\((\w+), ", source).group(1)  # type: ignore[union-attr]
    line = f"assert_size_stride({var}, {{{', '.join(['1'] * 2000)}}}, {{{', '.join(['1'] * 2000)}}}, \"input\");\n"
    out = _rewrite(blob_package, tmp_path / "rank.pt2",
                   lambda name, d: (name, d + line.encode() if name.endswith(".wrapper.cpp") else d))
    lines = source.count("\n") + 1
    with pytest.raises(es.PackageError, match=rf"\.wrapper\.cpp: line {lines}: the sizes or strides recorded for "
                                              rf"`{var}` list more than 1024 dimensions"):
        es.cpp.AOTIRunner(out)


def _library_mappings() -> int:
    with open("/proc/self/maps") as f:
        return sum(1 for line in f if "/externspec-aoti-" in line)


def test_loading_the_same_library_again_maps_nothing_new(blob_package: Path, tmp_path: Path) -> None:
    """The library cannot be unmapped (STB_GNU_UNIQUE makes it NODELETE): 1,000 load/close
    cycles added 6,000 mappings and 286 MiB. A copy of the package shares it too."""
    es.cpp.AOTIRunner(blob_package).close()
    once = _library_mappings()
    copy = shutil.copy(blob_package, tmp_path / "copy.pt2")
    x, n = MODEL.inputs(4)
    for path in [blob_package, copy] * 5:
        runner = es.cpp.AOTIRunner(path)
        torch.testing.assert_close(runner(x, n)[0], x.sin())
        runner.close()
    assert _library_mappings() == once


def test_a_package_without_input_records_warns_or_is_refused(blob_package: Path, tmp_path: Path) -> None:
    out = _rewrite(blob_package, tmp_path / "nosource.pt2",
                   lambda name, d: None if name.endswith(".wrapper.cpp") else (name, d))
    with pytest.warns(UserWarning, match=r"records no dtype or shape for input 0, input 1 \(it has no "
                                         r"\*\.wrapper\.cpp\): only the input count, device, layout and storage"):
        runner = es.cpp.AOTIRunner(out)
    x, n = MODEL.inputs(4)
    torch.testing.assert_close(runner(x, n)[0], x.sin())
    with pytest.raises(es.CallError, match=r"the model takes 2 inputs, got 1"):
        runner.run_flat([x])
    with pytest.raises(es.PackageError, match=r"records no dtype or shape.*require_input_records"):
        es.cpp.AOTIRunner(out, require_input_records=True)


def test_records_under_another_name_than_the_librarys_are_not_used(blob_package: Path, tmp_path: Path) -> None:
    """The library names its inputs (AOTInductorModelContainerGetInputName): a source that takes
    input 0 under another name is not this library's, and what it records is not applied."""
    with zipfile.ZipFile(blob_package) as z:
        source = z.read(next(n for n in z.namelist() if n.endswith(".wrapper.cpp"))).decode()
    var = re.search(r"ConstantHandle (\w+) = ConstantHandle\(input_handles\[0\]\)", source).group(1)  # type: ignore
    other = re.sub(rf"\b{var}\b", var + "_other", source).encode()
    out = _rewrite(blob_package, tmp_path / "other.pt2",
                   lambda name, d: (name, other if name.endswith(".wrapper.cpp") else d))
    with pytest.warns(UserWarning, match=r"records no dtype or shape for input 0 in its \*\.wrapper\.cpp"):
        runner = es.cpp.AOTIRunner(out)
    x, n = MODEL.inputs(4)
    torch.testing.assert_close(runner(x, n)[0], x.sin())


class _NoData(torch.Tensor):
    """A `_make_wrapper_subclass` tensor: cpu, float32, the right shape, no data."""

    @staticmethod
    def __new__(cls, *shape: int) -> _NoData:
        return torch.Tensor._make_wrapper_subclass(cls, shape, dtype=torch.float32, device="cpu")  # type: ignore

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        raise NotImplementedError(func)


def _fake(*shape: int) -> torch.Tensor:
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        return torch.empty(*shape)


def _storage_gone(*shape: int) -> torch.Tensor:
    x = torch.randn(*shape)
    x.untyped_storage().resize_(0)
    return x


@pytest.mark.parametrize(("make", "match"), [
    (_fake, r"input 0 is a tensor subclass that dispatches to Python"),
    (_NoData, r"input 0 is a tensor subclass that dispatches to Python"),
    (_storage_gone, r"input 0 reaches past its storage of 0 bytes"),
], ids=["FakeTensor", "wrapper-subclass", "storage-resized-to-0"])
def test_inputs_without_data_are_refused_naming_the_input(runner: es.cpp.AOTIRunner,
                                                          make: Callable[..., torch.Tensor], match: str) -> None:
    """They passed every check and the kernel died with SIGSEGV; eager torch raises."""
    with pytest.raises(es.CallError, match=match):
        runner.run_flat([make(4, 4), N])


def test_torchs_dynamic_cat_runs_both_edges_of_its_declared_ranges_as_torchs_runner() -> None:
    """test_dynamic_cat: Dim(min=1) writes a minimum of 2 into the wrapper (the compiler's own
    assumption); torch's runner runs size 1, and so must ours. A minimum above 2 is the model's."""
    path = cm.package("cat")
    ours, theirs = es.cpp.AOTIRunner(path), torch._inductor.aoti_load_package(str(path))
    g = torch.Generator().manual_seed(0)
    for a, b, c in [(1, 1, 3), (10, 20, 8), (1, 20, 3), (10, 1, 8)]:
        inputs = [torch.randn(rows, 4, generator=g) for rows in (a, b, c)]
        got, want = ours(*inputs), theirs(*inputs)
        assert torch.equal(got, want)
        assert torch.equal(got, torch.cat(inputs))
    for rows, match in [((11, 1, 3), r"input 0 has shape \[11, 4\]: size 0 must be at most 10"),
                        ((1, 21, 3), r"input 1 has shape \[21, 4\]: size 0 must be at most 20"),
                        ((1, 1, 2), r"input 2 has shape \[2, 4\]: size 0 must be at least 3"),
                        ((1, 1, 9), r"input 2 has shape \[9, 4\]: size 0 must be at most 8")]:
        with pytest.raises(es.CallError, match=match):
            ours.run_flat([torch.randn(r, 4) for r in rows])


def test_a_failing_shim_call_of_the_model_raises_atens_message() -> None:
    """Lite mode compiles `int_tensor + 2` to aoti_torch_cpu_add_Tensor with a float alpha, which
    ATen refuses; the message was "API call failed at wrapper.cpp, line N" only. From torch 2.15 an
    int scalar beside an integral tensor goes through the proxy executor instead (upstream #194262,
    docs/torch-compat.md), and the model runs."""
    runner = es.cpp.AOTIRunner(cm.package("int_add"))
    if _torch_support.minor_release(torch.__version__) >= _torch_support.minor_release("2.15.0"):
        torch.testing.assert_close(runner(torch.arange(4)), torch.arange(4) + 2)
        return
    with pytest.raises(es.ModelError, match=r"the model failed: .*For integral input tensors, argument alpha must "
                                            r"not be a floating point number"):
        runner(torch.arange(4))


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


def test_a_runner_on_cpu_0_takes_cpu_inputs(blob_package: Path) -> None:
    """Issue 36, item 12: `device="cpu:0"` loaded, then refused every CPU input ("input 0 is on cpu,
    the model runs on cpu:0")."""
    runner = es.cpp.AOTIRunner(blob_package, device="cpu:0")
    assert runner.device == torch.device("cpu")
    x, n = MODEL.inputs(4)
    torch.testing.assert_close(runner(x, n)[0], x.sin())
    with pytest.raises(es.UnsupportedError, match=r"device 'cuda:300' is not a torch device: the index must be"):
        es.cpp.AOTIRunner(blob_package, device="cuda:300")
