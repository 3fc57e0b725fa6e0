"""Where the tests find the repository's files: one definition of the checkout's root."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
IDL = REPO / "schema" / "externspec.thrift"
CONFORMANCE = REPO / "tests" / "conformance"  # the wire corpus both decoders run
PAYLOADS = REPO / "tests" / "compat" / "payloads"  # every released version's documents
