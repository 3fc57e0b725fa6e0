"""Message fragments typed by hand in both languages (issue 46 item 1), counted by
`tests.support.typed_twice` (its docstring says how). Messages both languages say come from one
table (`include/externspec/messages.def` and the other `.def` files); what is still typed
twice is counted here, and the count may only go down: a new fragment typed in both languages is a
message to add to the table."""

from __future__ import annotations

from tests.support.paths import REPO
from tests.support.typed_twice import typed_twice

# Measured when the table was introduced (99 before it, `python -m tests.support.typed_twice`: 35
# after), then 0 when the executors' op lookup hints, denied-op message (a .def string reads `\"`),
# option checks and device parser, and the decoder's version, range, union and size messages moved
# into it: every fragment is worded once.
REMAINING = 0


def test_no_more_fragments_are_typed_in_both_languages() -> None:
    found = typed_twice(REPO)
    listing = "\n".join(f"{py} | {cpp} | {frag!r}" for frag, (py, cpp) in sorted(found.items(), key=lambda kv: kv[1]))
    assert len(found) <= REMAINING, (f"{len(found)} fragments typed in both languages (at most {REMAINING}); word "
                                     f"the new ones once, in messages.def:\n{listing}")
