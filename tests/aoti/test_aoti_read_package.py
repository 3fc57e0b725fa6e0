"""`externspec.aoti.read_package` on packages that lie: every member it reads is bounded by the size
the zip's directory records (checked before inflating), read no further than that size, and CRC
checked; a missing, repeated or oversized member is a `PackageError` naming it (issue 26, item 8:
a 2 MB package cost +1.0 GB, and a package without the wrapper source raised KeyError)."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest
import torch

import externspec as es
from externspec import aoti, wire

MODEL = "pkg/data/aotinductor/model/abc"
X = torch.arange(4.0)


def spec_and_source() -> tuple[str, str]:
    """A one-node spec (aten::mul.Tensor) and a wrapper source with its call, as torch writes them."""
    b = es.SpecBuilder()
    b.add(torch.ops.aten.mul.Tensor, (X, X))
    source = ("auto arg0_1 = std::move(inputs[0]);\n"
              "aoti_torch_proxy_executor_call_function(proxy_executor, 0, 0, std::array<int64_t, 0>{}.data(), 3, "
              "std::array<AtenTensorHandle, 3>{arg0_1, arg0_1, buf0}.data());\n"
              "output_handles[0] = buf0.release();\n")
    return es.dumps(b.build()), source


def write_package(path: Path, members: dict[str, bytes | str], method: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", method) as z:
        for name, data in members.items():
            z.writestr(name.split("#")[0], data)  # `name#2`: the same member name again
    return path


def lie_about_size(path: Path, member: str, size: int) -> None:
    """Rewrite the uncompressed size the central directory (and local header) record for `member`."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    central = data.index(b"PK\x01\x02")
    while data[central + 46: central + 46 + len(name)] != name:
        central = data.index(b"PK\x01\x02", central + 4)
    struct.pack_into("<I", data, central + 24, size)
    local = struct.unpack_from("<I", data, central + 42)[0]
    struct.pack_into("<I", data, local + 22, size)
    path.write_bytes(bytes(data))


def test_reads_a_package(tmp_path: Path) -> None:
    spec, source = spec_and_source()
    package = aoti.read_package(write_package(tmp_path / "p.pt2", {f"{MODEL}.wrapper.json": spec,
                                                                   f"{MODEL}.wrapper.cpp": source}))
    assert package.json_text == spec
    assert package.calls == (aoti.WrapperCall(0, (), ("arg0_1", "arg0_1", "buf0")),)
    assert package.input_names == ("arg0_1",) and package.output_names == ("buf0",)
    (got,) = aoti.replay_extern_calls(package, es.ProxyExecutor(package.nodes).call_function, [X])
    assert torch.equal(got, X * X)


def test_a_package_without_the_wrapper_source(tmp_path: Path) -> None:
    spec, _ = spec_and_source()
    path = write_package(tmp_path / "p.pt2", {f"{MODEL}.wrapper.json": spec})
    with pytest.raises(es.PackageError, match=rf"p\.pt2: member '{MODEL}\.wrapper\.cpp' is missing \(the calls are "
                                              "read from the generated wrapper source\\)"):
        aoti.read_package(path)


@pytest.mark.parametrize("repeated", ["json", "cpp"])
def test_a_repeated_member(tmp_path: Path, repeated: str) -> None:
    spec, source = spec_and_source()
    members = {f"{MODEL}.wrapper.json": spec, f"{MODEL}.wrapper.cpp": source, f"{MODEL}.wrapper.{repeated}#2": "{}"}
    with pytest.warns(UserWarning, match="Duplicate name"):
        path = write_package(tmp_path / "p.pt2", members)
    with pytest.raises(es.PackageError, match=r"expected one .*wrapper\.json, found|\.wrapper\.cpp' appears 2 times"):
        aoti.read_package(path)


def test_sizes_are_checked_before_inflating(tmp_path: Path) -> None:
    """64 MiB + 1 of wrapper source (64 KiB deflated) is refused from the directory: nothing is inflated."""
    spec, _ = spec_and_source()
    big = b" " * (aoti.MAX_SOURCE_BYTES + 1)
    path = write_package(tmp_path / "p.pt2", {f"{MODEL}.wrapper.json": spec, f"{MODEL}.wrapper.cpp": big})
    del big
    assert path.stat().st_size < 1 << 20
    with pytest.raises(es.PackageError, match=rf"{MODEL}\.wrapper\.cpp: 67108865 bytes, over the limit of 67108864"
                                              r" bytes \(max_source_bytes\)") as refused:
        aoti.read_package(path)
    assert refused.value.source == f"{path}!{MODEL}.wrapper.cpp"  # the place as data, the sentence without it
    assert refused.value.message == "67108865 bytes, over the limit of 67108864 bytes (max_source_bytes)"
    with pytest.raises(es.PackageError, match=rf"{MODEL}\.wrapper\.json: \d+ bytes, over the limit of 100 bytes"):
        aoti.read_package(path, max_spec_bytes=100)


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED], ids=["stored", "deflated"])
@pytest.mark.parametrize("member", ["json", "cpp"])
@pytest.mark.parametrize("delta", [-7, 7], ids=["shorter", "longer"])
def test_a_member_whose_directory_lies(tmp_path: Path, method: int, member: str, delta: int) -> None:
    """A recorded size below the data's: the read stops there and the CRC check fails. Above it: the
    data ends early. Either way the member is named; nothing past the recorded size is read."""
    spec, source = spec_and_source()
    name = f"{MODEL}.wrapper.{member}"
    path = write_package(tmp_path / "p.pt2", {f"{MODEL}.wrapper.json": spec, f"{MODEL}.wrapper.cpp": source}, method)
    lie_about_size(path, name, len(spec if member == "json" else source) + delta)
    with pytest.raises(es.PackageError, match=rf"p\.pt2!{name}: "):
        aoti.read_package(path)


def test_not_a_zip_and_not_utf8(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pt2"
    bad.write_bytes(b"not a zip")
    with pytest.raises(es.PackageError, match=r"bad\.pt2: not a zip archive \(a \.pt2 file is one\)") as info:
        aoti.read_package(bad)
    assert info.value.kind == "not_zip"
    spec, source = spec_and_source()
    path = write_package(tmp_path / "p.pt2", {f"{MODEL}.wrapper.json": spec,
                                              f"{MODEL}.wrapper.cpp": source.encode() + b"\xff"})
    with pytest.raises(es.PackageError, match=rf"{MODEL}\.wrapper\.cpp: not UTF-8 at byte {len(source)}"):
        aoti.read_package(path)


def test_the_process_size_limit_is_read_at_call_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lowering `externspec.wire.MAX_JSON_BYTES` reaches `read_package` as it reaches `es.loads` and the
    command line: the spec member over it is refused from the directory (issue 37: aoti.py had copied
    the default at import, so it still read 256 MiB)."""
    spec, source = spec_and_source()
    path = write_package(tmp_path / "p.pt2", {f"{MODEL}.wrapper.json": spec, f"{MODEL}.wrapper.cpp": source})
    monkeypatch.setattr(wire, "MAX_JSON_BYTES", len(spec) - 1)
    with pytest.raises(es.PackageError, match=rf"{MODEL}\.wrapper\.json: {len(spec)} bytes, over the limit of "
                                              rf"{len(spec) - 1} bytes \(externspec\.wire\.MAX_JSON_BYTES\)"):
        aoti.read_package(path)
    assert aoti.read_package(path, max_spec_bytes=len(spec)).json_text == spec  # the caller's limit decodes it too
    monkeypatch.setattr(wire, "MAX_JSON_BYTES", len(spec))
    assert aoti.read_package(path).json_text == spec


@pytest.mark.parametrize("stem", [MODEL, "pkg/data/aotinductor/abc", "data/aotinductor/model/abc",
                                  "pkg/data/aotinductor/model/sub/abc"])
def test_the_package_reader_and_the_command_line_find_the_same_spec(tmp_path: Path, stem: str) -> None:
    """One table of where a package's schema documents sit (`aoti.SCHEMA_MEMBERS`): `read_package`
    reads an extern-kernel file exactly where the command line's reader finds one (read_package had
    its own test, which took a spec outside a model folder that validate did not see)."""
    from externspec.cli.commands import _documents as docs

    spec, source = spec_and_source()
    path = write_package(tmp_path / "p.pt2", {f"{stem}.wrapper.json": spec, f"{stem}.wrapper.cpp": source,
                                              "pkg/models/model.json": "{}"})
    cli_found = [s.label for s in docs.read_sources(str(path)) if s.type is es.ExternKernelNodes]
    try:
        package_found = [f"{path}:{stem}.wrapper.json"] if aoti.read_package(path).json_text == spec else []
    except es.PackageError as e:  # no model where a package keeps one: the archive is its exported program's
        assert e.kind == "exported_program", e
        package_found = []
    assert package_found == cli_found


def test_wrapper_call_lengths_reads_each_calls_lengths_symbolic_ints_included() -> None:
    """What the executors' "auto" layout and `upgrade --name-defaults` decide from: the lengths each
    call declares, which `parse_wrapper_calls` cannot replay when an int is symbolic (a dynamic shape)."""
    call = ("aoti_torch_proxy_executor_call_function(proxy_executor, {i}, {n}, std::array<int64_t, {n}>{{{ints}}}"
            ".data(), 1, std::array<AtenTensorHandle, 1>{{buf{i}}}.data());\n")
    source = call.format(i=0, n=2, ints="1, 1") + call.format(i=1, n=3, ints="8L + s77, 3, 4") + \
        call.format(i=2, n=0, ints="")
    assert aoti.wrapper_call_lengths(source) == ((0, 2, 1), (1, 3, 1), (2, 0, 1))
    with pytest.raises(es.ExternSpecError, match="symbolic ints"):
        aoti.parse_wrapper_calls(source)
