"""atheris (libFuzzer for Python) target: `externspec.thrift.loads` on arbitrary bytes.

Input layout: byte 0 picks the model type (low 4 bits, mod the table), the protocol (bit 4:
binary, compact) and strictness (bit 7); the rest is the Thrift struct. The seeds are every
conformance document that decodes, encoded in both protocols with that byte prepended
(tests/fuzz/run_fuzz.py writes them; `run_fuzz.py --target thrift` runs this file).

What counts as a bug: any exception other than `es.DecodeError` / `es.VersionError` (libFuzzer
reports it with the input), an accepted document that does not encode and decode back to itself,
an input that takes more than libFuzzer's `-timeout` or a process over its `-rss_limit_mb`.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports(include=["externspec"]):
    import externspec as es
    from externspec import thrift

# Keep in step with TYPES in tests/fuzz/run_fuzz.py (seed files name the type by index).
TYPES = (es.ExternKernelNodes, es.ExportedProgram, es.Node, es.Argument, es.Graph, es.TensorMeta, es.Device,
         es.ExternKernelNode)


def test_one_input(data: bytes) -> None:
    if not data:
        return
    model = TYPES[(data[0] & 0x0F) % len(TYPES)]
    protocol = thrift.PROTOCOLS[(data[0] >> 4) & 1]
    strict = bool(data[0] & 0x80)
    try:
        doc = thrift.loads(data[1:], model, protocol, strict=strict)
    except es.DecodeError as exc:
        if not exc.errors() or not all(e["path"].startswith("$") for e in exc.errors()):
            raise AssertionError(f"DecodeError without a JSON path: {exc.errors()}") from None
        return
    except es.VersionError:
        return
    again = thrift.loads(thrift.dumps(doc, protocol), model, protocol, strict=strict)
    if es.dumps(again) != es.dumps(doc):
        raise AssertionError(f"decode(encode(x)) != x:\n{es.dumps(doc)}\n{es.dumps(again)}")


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
