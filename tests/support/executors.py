"""Both executors behind one interface, for tests that run one body over each (the `executor`
fixture in tests/conftest.py), and the registry of the differences they are allowed to have."""

from __future__ import annotations

from typing import Any

import externspec as es

# Declared Python/C++ differences: name -> why. `diverges` rejects names not listed here, so a
# test cannot excuse a difference nobody declared.
DIVERGENCES: dict[str, str] = {
    "custom_objects": "the C++ executor binds torchbind objects given by name; the Python executor has no "
                      "object table and refuses `as_custom_obj` arguments at load",
    "torchbind_calls": "the C++ executor runs `call_torchbind` nodes (the method looked up among the registered "
                       "classes, its arguments bound like an op's); the Python executor, with no objects to call "
                       "them on, refuses them at load saying so",
    "default_spelling": "load errors quote an op's default value as each runtime prints it: torch's Python "
                        "schema (`1.0`) in the Python executor, c10's IValue (`1.`) in the C++ one",
}


def diverges(name: str) -> str:
    """The reason for declared divergence `name` (KeyError for an undeclared one)."""
    if name not in DIVERGENCES:
        raise KeyError(f"undeclared executor divergence {name!r}; declare it in tests/support/executors.py")
    return DIVERGENCES[name]


class Executor:
    """One of the two executors, `kind` "python" (es.ProxyExecutor) or "cpp" (es.cpp.ProxyExecutor):
    `executor(spec, **kwargs)` loads a spec."""

    def __init__(self, kind: str):
        self.kind = kind

    def __call__(self, spec: Any, **kwargs: Any) -> Any:
        return es.ProxyExecutor(spec, **kwargs) if self.kind == "python" else es.cpp.ProxyExecutor(spec, **kwargs)


def slot_counts(ex: Any, index: int) -> tuple[int, int, int, int]:
    """(input tensors, all tensor slots, input ints, all int slots) of node `index`."""
    if isinstance(ex, es.ProxyExecutor):
        p = ex.plans[index]
        return p.layout.tensor_inputs, p.num_tensors, p.layout.int_inputs, p.num_ints
    return tuple(ex._impl.num_slots(index))
