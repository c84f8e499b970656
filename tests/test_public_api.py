"""The public surface is deliberate: `__all__` is sorted and lists exactly the public names (httpx's habit)."""

from __future__ import annotations

import types

import chainsum


def test_all_is_sorted_and_complete() -> None:
    public = {n for n, v in vars(chainsum).items() if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert set(chainsum.__all__) == public
    assert chainsum.__all__ == sorted(chainsum.__all__, key=lambda n: (not n[0].isupper(), n))
