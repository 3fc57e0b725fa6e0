"""Moved to `externspec.wire.version`: this path is kept for one release (CHANGELOG.md, Deprecated)."""

from typing import TYPE_CHECKING

from externspec._moved import alias_module

if TYPE_CHECKING:
    from externspec.wire.version import *  # noqa: F403
else:
    alias_module(__name__, "externspec.wire.version")
