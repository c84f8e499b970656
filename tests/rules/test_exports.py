"""`chainsum.rules` exports exactly its public names, in ruff's isort-style order (constants, classes,
functions)."""

from __future__ import annotations

import chainsum.rules as rules


def _isort_key(name: str) -> tuple[int, str]:
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_exports_are_sorted_and_complete() -> None:
    public = {name for name in vars(rules) if not name.startswith("_")}
    modules = {name for name, value in vars(rules).items() if type(value).__name__ == "module"}
    assert rules.__all__ == sorted(rules.__all__, key=_isort_key)
    assert set(rules.__all__) == public - modules
