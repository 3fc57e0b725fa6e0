"""The schema version of this checkout in the spellings tests compare against, so a release bumps
SCHEMA_VERSION in the IDL alone."""

from __future__ import annotations

import externspec as es

MAJOR, MINOR = es.SCHEMA_VERSION.major, es.SCHEMA_VERSION.minor


def idl_literal(major: int, minor: int) -> str:
    """A SchemaVersion as the IDL's SCHEMA_VERSION const spells it."""
    return f'{{"major": {major}, "minor": {minor}}}'


CURRENT = {"major": MAJOR, "minor": MINOR}  # as a document's schema_version
CURRENT_TEXT = f"{MAJOR}.{MINOR}"  # as messages print it
CURRENT_IDL = idl_literal(MAJOR, MINOR)
NEXT_MINOR_IDL = idl_literal(MAJOR, MINOR + 1)
