"""Writing a command's output file: atomically, through a securely created temporary file.

`write_output(path, data)` writes `data` to a temporary file that `tempfile.mkstemp` creates in
OUT's own directory (a fresh, unpredictable name opened with O_EXCL, mode 0600, so nothing planted
in advance, such as a symlink, is followed), flushes it, and renames it over OUT with
`os.replace`: a reader sees the old file or the complete new one, never a half-written one. On any
failure the temporary file is removed and an `OutputError` names OUT and the reason. `-` writes
to stdout. `open_output(path)` is the same for output written piece by piece (a .pt2 archive).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from typing import IO


class OutputError(Exception):
    """OUT cannot be written (missing directory, a directory, no permission, disk full). Exit code 1."""


def write_output(path: str, data: bytes) -> None:
    """Write `data` to `path` atomically (or to stdout for `-`); raise OutputError on failure."""
    with open_output(path) as f:
        f.write(data)


@contextlib.contextmanager
def open_output(path: str) -> Iterator[IO[bytes]]:
    """A binary file to write OUT through: the temporary file replaces OUT when the block ends,
    and is removed if the block (or the replacing) fails. OutputError names OUT and the reason."""
    if path == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    target = os.path.abspath(path)
    directory = os.path.dirname(target)
    if os.path.isdir(target):
        raise OutputError(f"cannot write {path}: it is a directory")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise OutputError(f"cannot write {path}: {os.path.dirname(path)} is not a directory")
    if not os.path.isdir(directory):
        raise OutputError(f"cannot write {path}: directory {os.path.dirname(path) or '.'} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=directory)
    except OSError as e:
        raise OutputError(f"cannot write {path}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        _keep_mode(target, tmp)
        os.replace(tmp, target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise OutputError(f"cannot write {path}: {e.strerror or e}") from None
        raise


def _keep_mode(target: str, tmp: str) -> None:
    """mkstemp makes the file 0600: give the new file what a plain open() would have (the old
    file's permissions, or 0666 minus the umask for a new one)."""
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(tmp, mode)
