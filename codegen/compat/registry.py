"""The rule registry: rules register themselves with `@rule(...)`; `RULES` lists them by id."""

from __future__ import annotations

from collections.abc import Callable

from .model import Bump, Category, Check, Rule

RULES: dict[str, Rule] = {}


def rule(id: str, purpose: str, categories: tuple[Category, ...], bump: Bump,
         remedy: str = "") -> Callable[[Check], Check]:
    """Register a check function as a rule (ids are unique)."""

    def register(check: Check) -> Check:
        if id in RULES:
            raise ValueError(f"duplicate compat rule id {id}")
        RULES[id] = Rule(id, purpose, categories, bump, check, remedy)
        return check

    return register
