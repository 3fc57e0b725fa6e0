"""Terminal output: aligned tables, colour only on a TTY (NO_COLOR, FORCE_COLOR and `--color` say otherwise), progress.

Scripts read stdout; humans read a terminal. Colour codes and progress lines would corrupt pipes and
logs, so both appear only when the stream is a TTY. Progress goes to stderr so stdout stays clean.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from typing import TextIO

_CODES = {"bold": "1", "red": "31", "green": "32", "yellow": "33", "dim": "2"}


COLOR_MODES = ("auto", "always", "never")
color_mode = "auto"  # `--color`, set by the command line before a command runs


def colour_enabled(stream: TextIO) -> bool:
    """`--color always|never` decides; under `auto` (the default) a non-empty NO_COLOR
    (https://no-color.org) disables colour, then a non-empty FORCE_COLOR
    (https://force-color.org) enables it, else colour is on for a TTY only."""
    if color_mode != "auto":
        return color_mode == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


# Control characters in caret notation (ESC `^[`, CR `^M`, LF `^J`, DEL `^?`), as git shows a
# remote's; tab kept. C1 controls (U+0080..U+009F, CSI among them) as `\u009b`.
_MASK = {c: f"^{chr(c ^ 0x40)}" for c in [*range(0x20), 0x7F] if c != 0x09}
_MASK.update({c: f"\\u{c:04x}" for c in range(0x80, 0xA0)})


def shown(text: str) -> str:
    """`text` from outside (a spec's strings, a file or member name, an error naming them) as the
    text output prints it: every control character masked (`_MASK`), so a string cannot move the
    cursor, set the title or write the clipboard (OSC 52) of the terminal it is printed to, nor
    start a line of its own (a CI log reads `::error`/`::stop-commands::` at a line's start as a
    workflow command). `--format github` escapes by GitHub's rules instead; JSON by JSON's."""
    return text.translate(_MASK)


class Painter:
    """Wraps text in ANSI colours, or returns it unchanged when colour is off."""

    def __init__(self, stream: TextIO):
        self.enabled = colour_enabled(stream)

    def __call__(self, text: str, style: str) -> str:
        if not self.enabled or not text:
            return text
        return f"\x1b[{_CODES[style]}m{text}\x1b[0m"


def terminal_width(stream: TextIO) -> int | None:
    """The width to fit, or None when the output is not a terminal (never truncate for scripts)."""
    isatty = getattr(stream, "isatty", None)
    if not (isatty and isatty()):
        return None
    return shutil.get_terminal_size((100, 24)).columns


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, width: int | None = None,
          shrink: int | None = None, paint: Painter | None = None) -> list[str]:
    """Rows as left-aligned columns separated by two spaces, each cell `shown`.

    When `width` is given and the table is wider, column `shrink` (default: the last) is clipped
    with an ellipsis so that each line fits. The header is bold when `paint` has colour on.
    """
    cols = len(headers)
    rows = [[shown(c) for c in r] for r in rows]
    widths = [max([len(headers[i])] + [len(r[i]) for r in rows]) for i in range(cols)]
    if width is not None:
        k = cols - 1 if shrink is None else shrink
        excess = sum(widths) + 2 * (cols - 1) - width
        if excess > 0:
            widths[k] = max(widths[k] - excess, min(len(headers[k]), 8))
    lines = []
    for n, row in enumerate([list(headers), *[list(r) for r in rows]]):
        cells = [_clip(c, widths[i]).ljust(widths[i]) if i < cols - 1 else _clip(c, widths[i])
                 for i, c in enumerate(row)]
        line = "  ".join(cells).rstrip()
        lines.append(paint(line, "bold") if (paint and n == 0) else line)
    return lines


class Progress:
    """`[3/120] name` on stderr, redrawn in place, for batches on a TTY; silent otherwise."""

    def __init__(self, total: int, *, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.total = total
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = total > 1 and bool(isatty and isatty())
        self.shown = False

    def update(self, done: int, name: str) -> None:
        if not self.enabled:
            return
        width = shutil.get_terminal_size((100, 24)).columns
        line = _clip(f"[{done}/{self.total}] {name}", width - 1)
        self.stream.write("\r\x1b[2K" + line)
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        """Erase the progress line before normal output is printed."""
        if self.shown:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
