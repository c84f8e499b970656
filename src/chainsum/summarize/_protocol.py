"""What a summarizer is: a callable from a rendered transcript to summary text.

Async is the core (``async def f(transcript: str) -> str``); plain functions are accepted too and run as they
are (they should be quick or release the GIL). `call_summarizer` adapts either kind and checks the output, so the
rest of chainsum never sees a non-string or an empty summary.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeAlias, cast

from ..errors import MissingDependencyError, SummarizerError

if TYPE_CHECKING:
    from ._structured import StructuredSummary

__all__ = ["Summarizer", "SummarizerLike", "call_summarizer", "is_local"]

Summarizer: TypeAlias = Callable[[str], Awaitable[str]]
"""The async form every summarizer is adapted to."""

SummarizerLike: TypeAlias = Callable[[str], Awaitable[str] | str]
"""What users may pass: an async or a sync callable, transcript in, summary text out."""


async def call_summarizer(summarizer: SummarizerLike, transcript: str) -> str:
    """Call a sync or async summarizer and return its text, stripped.

    A `StructuredSummary` (what `ExtractiveStructuredSummarizer` answers) counts as its text form. Raises
    `SummarizerError` (kind ``empty``) for empty or whitespace output and (kind ``invalid``) for any other result
    that is not a string; exceptions the summarizer raises itself that are not `SummarizerError` are wrapped as
    kind ``transport`` so callers handle one type.
    """
    result: object
    try:
        result = cast(object, summarizer(transcript))  # user code: trust no annotation
        if inspect.isawaitable(result):
            result = cast(object, await result)
    except (SummarizerError, MissingDependencyError):
        raise
    except Exception as exc:  # a failing user callable must not escape as an arbitrary type
        raise SummarizerError(f"{type(exc).__name__}: {exc}", kind="transport") from exc
    if not isinstance(result, str):
        structured = _structured_text(result)
        if structured is None:
            raise SummarizerError(f"returned {type(result).__name__}, not text", kind="invalid")
        result = structured
    text = result.strip()
    if not text:
        raise SummarizerError("returned an empty summary", kind="empty")
    return text


def _structured_text(value: object) -> str | None:
    """The text form of a `StructuredSummary`, None for anything else. The module defining it (pydantic models,
    built on import: about 100 ms) is looked up, not imported: while it is not loaded, no value can be one."""
    module = sys.modules.get(_STRUCTURED)
    if module is None or not isinstance(value, module.StructuredSummary):
        return None
    return cast("StructuredSummary", value).to_text()


_STRUCTURED = "chainsum.summarize._structured"


def is_local(summarizer: object) -> bool:
    """The summarizer (or one it wraps, through ``inner``: a counting wrapper) calls no model and costs nothing to
    call: it says ``local = True``, as `ExtractiveSummarizer` does. The one rule for "model-free": the manager's
    preference list and model coverage, and the executor's summary check, all ask it."""
    current: object = summarizer
    for _ in range(_MAX_WRAPPERS):  # bounded: an object that makes attributes up (a test double) has no end
        if current is None:
            return False
        if getattr(current, "local", False) is True:
            return True
        current = getattr(current, "inner", None)
    return False


_MAX_WRAPPERS = 8
"""How many ``inner`` wrappers `is_local` looks through: a real chain is two or three deep, while
`unittest.mock.Mock` answers every ``inner`` with a new object, and following them hung an adapter's constructor."""
