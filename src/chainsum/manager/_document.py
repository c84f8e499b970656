"""`compact_document`: a conversation document in, the compacted document out, with the report.

What ``chainsum compact`` and the service's ``POST /api/compact`` do, as one library call: read the document (any
format chainsum reads), compact it with the `CompactionSettings` of the configuration (the manager's own: the same
strategy behind the same tail guard), and write it back in the input's format, or the target provider's. The
surfaces only parse their input (a file and options, a JSON body), call it and render what it returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._sync import sync_version
from ..executor import check_budget, check_hard_limit
from ..formats import Conversation, Dropped, dump, load, output_target
from ..rules import PROVIDERS
from ..tokens import HeuristicCounter
from ._compaction import CompactionSettings
from ._config import ManagerConfig

if TYPE_CHECKING:
    from ..executor import CompactResult, ProgressCallback
    from ..tokens import TokenCounter

__all__ = ["CompactedDocument", "compact_document", "compact_document_sync"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactedDocument:
    """What `compact_document` returns."""

    document: Any
    """The compacted conversation as a wire document (JSON-ready) in `format`: the input itself, unchanged, after a
    dry run or when nothing was gained."""
    format: str
    """The format `document` is written in: the input's, or the target provider's when one was asked for (and for
    an input that cannot be written, such as a Claude Code log)."""
    provider: str
    """The provider whose rules the result was checked and repaired against."""
    result: CompactResult
    """What the compaction did: the messages, the plans, the sizes, the errors (`CompactResult.report` is the JSON
    report of ``chainsum compact --report`` and ``POST /api/compact``)."""
    dropped: tuple[Dropped, ...] = ()
    """What writing `format` could not express (a part the target format has no field for), one entry each."""

    def report(self) -> dict[str, Any]:
        """The JSON report: `CompactResult.report`."""
        return self.result.report()


async def compact_document(
    document: Any,
    *,
    budget: int | None = None,
    hard_limit: int | None = None,
    provider: str | None = None,
    format: str | None = None,
    strategy: str | None = None,
    settings: CompactionSettings | None = None,
    counter: TokenCounter | None = None,
    dry_run: bool = False,
    progress: ProgressCallback | None = None,
) -> CompactedDocument:
    """Compact the conversation `document` to `budget` tokens and write it back.

    `document` is a document in any format chainsum reads (parsed JSON, or its text or bytes; `format` when
    detection should not decide), or a `Conversation` already loaded. `budget` and `hard_limit` are as
    `chainsum.executor.compact` takes them (0: as small as the strategy can make it; the hard limit is the model's
    window, where the last resorts may act). The result is checked against `provider`'s rules and written in its
    format; without one, in the input's format against the rules of the provider that format belongs to.
    `strategy` names another strategy than the settings' (behind the same tail guard). `settings` defaults to
    those of a default `ManagerConfig`; `counter` to the heuristic counter. A dry run calls no model (see
    `chainsum.executor.compact`) and returns the input with the plans.

    Bad input raises before any work, one line naming what: `chainsum.errors.FormatError` for a document that
    cannot be read (with where), `ValueError` for a budget, hard limit, provider or strategy that is not one.
    A summarizer that fails does not raise: its messages stay, and the result's ``errors`` say why."""
    budget = check_budget(budget, "budget")
    hard_limit = check_budget(hard_limit, "hard_limit")
    check_hard_limit(hard_limit, budget)
    if provider is not None and provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
    settings = settings or CompactionSettings.from_config(ManagerConfig())
    if strategy is not None:
        settings = settings.with_strategy(strategy)
    conv = document if isinstance(document, Conversation) else load(document, format=format)
    target, out_format = output_target(conv.format, provider)
    result = await settings.compact(
        conv.messages,
        summarizer=settings.summarizer,
        counter=counter or HeuristicCounter(),
        budget=budget,
        hard_limit=hard_limit,
        provider=target,
        dry_run=dry_run,
        progress=progress,
    )
    dropped: list[Dropped] = []
    doc = dump(Conversation(tuple(result.messages), conv.format, conv.envelope), to=out_format, dropped=dropped)
    return CompactedDocument(document=doc, format=out_format, provider=target, result=result, dropped=tuple(dropped))


compact_document_sync = sync_version(compact_document)
"""`compact_document` for synchronous code, inside a running event loop too (it then runs on a worker thread)."""
