"""The runner on the text members of a package: the metadata, the torchbind object list (one
bounded JSON reader for both: nlohmann's DOM had taken +1.24 GB) and the wrapper source (read in
linear time, its records bounded).

Slow: compiles one small model (cached)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
import torch

import externspec as es
from tests.support import cpp_models as cm
from tests.support.package_edits import (
    add_deflated,
    rewrite,
    rewrite_deflated,
)

# Every test: no directory the runner extracted outlives what made it (success or failure).
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("extraction_root")]

MODEL = cm.MODELS["runner"]


def test_hostile_wrapper_source_is_read_in_linear_time(blob_package: Path, tmp_path: Path) -> None:
    # 7 MB that the former regexes took ~25 min over (each match attempt rescanned to the end).
    junk = ("assert_size_stride(a, {" * 150_000 + "\n" + "auto v = std::move(inputs[" * 150_000).encode()
    edited = rewrite(blob_package, tmp_path / "junk.pt2",
                      lambda name, data: (name, data + junk if name.endswith(".wrapper.cpp") else data))
    runner = es.cpp.AOTIRunner(edited)
    inputs = MODEL.inputs(3)
    torch.testing.assert_close(runner(*inputs)[3], MODEL.module(*inputs)[3])


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
    out = rewrite(blob_package, tmp_path / "metadata.pt2",
                   lambda name, d: (name, metadata if name.endswith(".wrapper_metadata.json") else d))
    with pytest.raises(es.PackageError, match=r"wrapper_metadata\.json: " + match):
        es.cpp.AOTIRunner(out)


def test_a_device_key_inside_another_value_is_not_the_device_key(blob_package: Path, tmp_path: Path) -> None:
    metadata = b'{"note": "\\"AOTI_DEVICE_KEY\\": \\"cuda\\"", "AOTI_DEVICE_KEY": "cpu"}'
    out = rewrite(blob_package, tmp_path / "metadata.pt2",
                   lambda name, d: (name, metadata if name.endswith(".wrapper_metadata.json") else d))
    x, n = MODEL.inputs(4)
    torch.testing.assert_close(es.cpp.AOTIRunner(out)(x, n)[0], x.sin())


def test_metadata_is_read_with_the_bounded_json_reader(blob_package: Path, tmp_path: Path) -> None:
    # 16 MiB of `[` deflate to 16 KB: nlohmann's DOM took +1.24 GB before any type check.
    big = rewrite_deflated(blob_package, tmp_path / "big.pt2", ".wrapper_metadata.json", b"[" * (16 << 20))
    with pytest.raises(es.PackageError, match=r"wrapper_metadata\.json: 16777216 bytes, over the limit of 1048576"):
        es.cpp.AOTIRunner(big)
    deep = rewrite_deflated(blob_package, tmp_path / "deep.pt2", ".wrapper_metadata.json", b"[" * 1000)
    with pytest.raises(es.PackageError, match=rf"wrapper_metadata\.json: not a JSON object.*nesting deeper than "
                                              rf"{es.MAX_JSON_DEPTH} levels"):
        es.cpp.AOTIRunner(deep)
    twice = rewrite(blob_package, tmp_path / "twice.pt2", lambda name, d: (name, b'{"AOTI_DEVICE_KEY": "cpu", '
                     b'"AOTI_DEVICE_KEY": "cuda"}' if name.endswith(".wrapper_metadata.json") else d))
    with pytest.raises(es.PackageError, match=r"key `AOTI_DEVICE_KEY` appears more than once"):
        es.cpp.AOTIRunner(twice)


def test_the_torchbind_object_list_is_read_with_the_bounded_json_reader(blob_package: Path, tmp_path: Path) -> None:
    """Issue 36, item 3: `custom_objs_config.json` is read on every load, opt-in or not; 16 MiB of
    `[` (16 KB deflated) in a package without torchbind objects cost +1231 MiB in nlohmann's DOM."""
    config = "data/aotinductor/model/custom_objs_config.json"
    big = add_deflated(blob_package, tmp_path / "big.pt2", config, b"[" * (2 << 20))
    with pytest.raises(es.PackageError, match=r"custom_objs_config\.json: 2097152 bytes, over the limit of 1048576"):
        es.cpp.AOTIRunner(big)
    deep = add_deflated(blob_package, tmp_path / "deep.pt2", config, b"[" * 1000)
    with pytest.raises(es.PackageError, match=rf"custom_objs_config\.json: not a JSON object \(torch's list of a "
                                              rf"model's torchbind objects is .*nesting deeper than "
                                              rf"{es.MAX_JSON_DEPTH} levels"):
        es.cpp.AOTIRunner(deep)
    twice = add_deflated(blob_package, tmp_path / "twice.pt2", config, b'{"a": "x", "a": "y"}')
    with pytest.raises(es.PackageError, match=r"custom_objs_config\.json: key `a` appears more than once"):
        es.cpp.AOTIRunner(twice)


def test_a_huge_recorded_shape_is_refused_before_it_is_kept(blob_package: Path, tmp_path: Path) -> None:
    # A 60 MiB `assert_size_stride` line of one-character sizes cost +1.1 GB before dlopen.
    with zipfile.ZipFile(blob_package) as z:
        source = z.read(next(n for n in z.namelist() if n.endswith(".wrapper.cpp"))).decode()
    var = re.search(r"assert_size_stride\((\w+), ", source).group(1)  # type: ignore[union-attr]
    line = f"assert_size_stride({var}, {{{', '.join(['1'] * 2000)}}}, {{{', '.join(['1'] * 2000)}}}, \"input\");\n"
    out = rewrite(blob_package, tmp_path / "rank.pt2",
                   lambda name, d: (name, d + line.encode() if name.endswith(".wrapper.cpp") else d))
    lines = source.count("\n") + 1
    with pytest.raises(es.PackageError, match=rf"\.wrapper\.cpp: line {lines}: the sizes or strides recorded for "
                                              rf"`{var}` list more than 1024 dimensions"):
        es.cpp.AOTIRunner(out)
