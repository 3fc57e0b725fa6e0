"""The errors externspec raises for bad input, all under `ExternSpecError`."""

from __future__ import annotations


class ExternSpecError(Exception):
    """Base of every error externspec raises for bad input (a spec, a file, call arrays)."""


class DecodeError(ExternSpecError, ValueError):
    """A document does not match the schema.

    `path` is the JSON path of the first problem (`$.nodes[3].node.inputs[0].arg`), and
    `errors` lists the problems as (path, message) pairs: at most `wire.MAX_DECODE_ERRORS` of
    them, `truncated` when the document has more (a hostile one must not cost one object each).
    """

    def __init__(self, errors: list[tuple[str, str]], source: str | None = None, truncated: bool = False):
        self.errors = errors
        self.source = source
        self.truncated = truncated
        self.path = errors[0][0] if errors else "$"
        first = f"{self.path}: {errors[0][1]}" if errors else "invalid document"
        if truncated:
            more = f" (and more: listing stopped after {len(errors)} problems)"
        else:
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(f"{source}: {first}{more}" if source else f"{first}{more}")


class VersionError(ExternSpecError):
    """A document's schema version cannot be read by this version of externspec."""


class UnsupportedError(ExternSpecError, TypeError):
    """A value or type that the extern-kernel ABI cannot carry (named: op, argument, type)."""


class SpecMismatchError(ExternSpecError, ValueError):
    """A node does not match the op it names, found at load time: unknown op, missing, unknown or
    retyped argument, changed returns (the message names the node, the argument and both types)."""


class CallError(ExternSpecError, ValueError):
    """A call does not match what it must: arguments that do not bind to the op's schema (at
    export), or flat arrays whose lengths or int returns differ from the node's plan (at run)."""


class PackageError(ExternSpecError, ValueError):
    """An AOTInductor package cannot be loaded: not a zip archive, no such model, a member whose
    name escapes the package (absolute, `..`) or whose size is over a limit, a library that is not
    an AOTInductor model. The message names the package and the member."""


class ModelError(ExternSpecError, RuntimeError):
    """A compiled model failed while running, e.g. its own check on the inputs' values
    (`torch._check(n.item() >= 3)`): the message is the model's."""
