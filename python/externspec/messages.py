"""The messages both languages render, from one table: `include/externspec/messages.def`,
which the C++ sources #include (`messages.h`) and this module reads. A message is worded once;
tests/cpp/test_messages.py renders every entry through both languages and compares.

`message(name, **params)` replaces each `{param}` of the entry's text with `str(value)`; a
placeholder without a value is a KeyError, as it is a std::invalid_argument in C++.
"""

from __future__ import annotations

import re

from ._def_file import DEF_DIR, entries

__all__ = ["MESSAGES", "MESSAGES_FILE", "message", "placeholders"]

MESSAGES_FILE = DEF_DIR / "messages.def"

# name -> text, in the file's order.
MESSAGES: dict[str, str] = {fields[0]: fields[1] for _, macro, fields in entries(MESSAGES_FILE)
                            if macro == "ES_MESSAGE"}

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def placeholders(name: str) -> tuple[str, ...]:
    """The parameters message `name` takes, in the order its text names them."""
    return tuple(_PLACEHOLDER.findall(MESSAGES[name]))


def message(name: str, /, **params: object) -> str:
    """Message `name` with its placeholders replaced by `params`."""
    return _PLACEHOLDER.sub(lambda m: str(params[m.group(1)]), MESSAGES[name])
