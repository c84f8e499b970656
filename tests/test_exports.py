"""Every package exports exactly its public names, in ruff's isort-style order (constants, classes, functions),
and every exported name resolves (httpx's habit): internals stay private, and nothing is exported by accident."""

from __future__ import annotations

import importlib
import types

import pytest

PACKAGES = [
    "chainsum",
    "chainsum.chain",
    "chainsum.executor",
    "chainsum.formats",
    "chainsum.manager",
    "chainsum.messages",
    "chainsum.rules",
    "chainsum.server",
    "chainsum.store",
    "chainsum.strategies",
    "chainsum.summarize",
    "chainsum.tokens",
]
_TYPING = {"Any", "TYPE_CHECKING", "annotations"}


def _isort_key(name: str) -> tuple[int, str]:
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_complete_and_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported: list[str] = module.__all__
    assert exported == sorted(exported, key=_isort_key), name
    public = {
        n
        for n, value in vars(module).items()
        if not n.startswith("_") and not isinstance(value, types.ModuleType) and n not in _TYPING
    }
    lazy = set(exported) - public  # loaded on first access by a module `__getattr__` (optional dependencies)
    assert public <= set(exported), f"{name} defines public names it does not export: {sorted(public - set(exported))}"
    for n in lazy:
        assert getattr(module, n) is not None, f"{name}.{n}"
    with pytest.raises(AttributeError):
        getattr(module, "no_such_name")  # noqa: B009 - the module's own __getattr__ must refuse unknown names


def test_the_summarizer_protocol_is_public() -> None:
    import chainsum.summarize as summarize

    assert {"Summarizer", "SummarizerLike", "call_summarizer", "render_transcript"} <= set(summarize.__all__)
