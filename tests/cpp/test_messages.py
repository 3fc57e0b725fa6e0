"""Messages are worded once (issue 46 item 1): `include/externspec/messages.def` is the one
table both languages render from. Every entry, rendered by Python (`externspec.messages`) and by
C++ (`externspec::render_message` through es.cpp's binding) with the same values, is the same text;
and the table's shape is what both readers need (unique names, placeholders that are names)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import externspec as es
from externspec._def_file import entries
from externspec.messages import MESSAGES, message, placeholders

NAMES = sorted(MESSAGES)


def test_the_table_has_unique_names_and_only_named_placeholders() -> None:
    assert len(NAMES) >= 20
    for name, text in MESSAGES.items():
        assert re.fullmatch(r"[A-Z][A-Z0-9_]*", name), name
        assert re.sub(r"\{\w+\}", "", text).count("{") == 0, f"{name}: a brace that is not a placeholder"


@pytest.mark.parametrize("name", NAMES)
def test_every_message_renders_the_same_in_both_languages(name: str) -> None:
    params = {p: f"<{p} {i}>" for i, p in enumerate(placeholders(name))}
    python = message(name, **params)
    assert es.cpp.extension().render_message(name, params) == python
    assert all(v in python for v in params.values())


def test_a_missing_value_is_refused_by_both() -> None:
    with pytest.raises(KeyError):
        message("CALL_PLAN_TAKES", label="node 0")
    with pytest.raises(ValueError, match=r"no value for the message's \{passes\}"):
        es.cpp.extension().render_message("CALL_PLAN_TAKES", {"label": "node 0"})


def test_a_def_string_reads_the_escapes_the_compiler_reads(tmp_path: Path) -> None:
    """`\\"` and `\\\\` in a `.def` string are what C++ reads in the same literal (the denied-op
    message's quotes); any other escape is refused rather than read differently."""
    table = tmp_path / "t.def"
    table.write_text('ES_T(A, "say \\"hi\\" and \\\\ once")\n', encoding="utf-8")
    assert [fields for _, _, fields in entries(table)] == [["A", 'say "hi" and \\ once']]
    table.write_text('ES_T(A, "a \\n b")\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"t\.def:1: the escape `\\n` is not read"):
        list(entries(table))
    assert '"' in MESSAGES["OP_DENIED"] and '\\"' not in MESSAGES["OP_DENIED"]
