"""`chainsum.summarize` exports exactly its public names, sorted the way ruff's isort-style sort does."""

from __future__ import annotations

import chainsum.summarize as summarize


def _kind(name: str) -> int:
    if name.isupper():
        return 0
    return 1 if name[0].isupper() else 2


def test_all_is_sorted_and_complete() -> None:
    public = {name for name, value in vars(summarize).items() if not name.startswith("_")}
    modules = {name for name in public if type(getattr(summarize, name)).__name__ == "module"}
    typing_names = {"Any", "TYPE_CHECKING"}
    lazy = summarize._LAZY  # pyright: ignore[reportPrivateUsage] - loaded on first access, see the module
    assert set(summarize.__all__) == (public - modules - typing_names) | lazy
    for name in lazy:  # every lazy name resolves
        assert getattr(summarize, name) is not None
    assert summarize.__all__ == sorted(summarize.__all__, key=lambda n: (_kind(n), n))


def test_protocol_names_still_exported() -> None:
    assert {"Summarizer", "SummarizerLike", "call_summarizer", "render_transcript"} <= set(summarize.__all__)
