"""`CompactionSettings`: how chainsum compacts, decided once from a `ManagerConfig` and shared by every surface.

The manager (`ContextManager`), ``chainsum compact`` and the service's ``POST /api/compact`` (both through
`compact_document`) compact with the one object this module builds, so a configuration means the same plans on
every surface: the same strategy behind the same `TailGuard` (issue 23: the CLI and the endpoint built theirs
without it, and left fewer than ``preserve_recent`` messages verbatim where the manager kept them), the same depth
cap, summary role and summarizer input cap. Each caller adds only what is its own per call: the budget and hard
limit, the counter, the target provider, and how it calls the summarizers (`summarizer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

from ..chain import SummaryRole
from ..executor import compact
from ..strategies import AutoStrategy, Strategy, StrategyOptions, TailGuard, strategy_named
from ._config import ManagerConfig
from ._summarizers import AnySummarizer
from ._summarizers_config import summarizers_from_config

if TYPE_CHECKING:
    from ..executor import CompactResult, ProgressCallback
    from ..messages import Message
    from ..summarize import SummarizerLike
    from ..tokens import TokenCounter

__all__ = ["CompactionSettings"]

_MIN_INPUT_TOKENS = 50
"""The least summarizer input a compaction plans for, whatever a caller's own header takes from the cap."""


def _guarded(inner: Strategy, preserve_recent: int) -> TailGuard:
    return TailGuard(inner, preserve_recent, inner.name)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionSettings:
    """Everything about a compaction that the configuration decides, built once (`from_config`) and passed
    explicitly: what `ContextManager`, `compact_document`, ``chainsum compact`` and ``POST /api/compact`` share.
    Frozen: derive a variant with `with_strategy` or `dataclasses.replace`."""

    strategy: Strategy
    """The planner of every compaction: the configured strategy behind a `TailGuard`, so that no plan reaches into
    the last `preserve_recent` messages (they give way only when they alone, with the system prompt and a summary,
    would be over the budget, or when the history is over the hard limit)."""
    fallback: Strategy
    """The model-free last resort (``auto`` without summaries: masks, dropping old summaries, moving the oldest
    messages to the archive, clipping the current turn's tool output) behind the same guard; the manager runs it
    when the summarizers failed or the history is still over the window."""
    strategy_options: StrategyOptions
    """What a named strategy is built with (`with_strategy` builds another from them): the configured
    ``summary_ratio`` and ``preserve_recent``, and ``auto``'s least summary share set to ``summary_ratio``, so each
    new summary covers at least that share of the messages not yet summarized (in a live session, summaries come
    less often than "just enough" would make them)."""
    summarizers: tuple[AnySummarizer, ...]
    """The configured summarizers in order of preference, the extractive one last. The manager tries them all in
    turn (`chainsum.manager._summarizers.SummarizerChain`); a one-shot compaction calls the first (`summarizer`)."""
    preserve_recent: int
    """Most recent messages kept verbatim (``SUMMARIZATION_PRESERVE_RECENT``)."""
    max_depth: int
    """Deepest summary of summaries (``SUMMARIZATION_MAX_SUMMARY_CHAIN_DEPTH``); past it old summaries leave for the
    archive."""
    summary_role: SummaryRole
    """Role of the record message summaries go into: ``user`` (a record without authority) or ``system``."""
    summarizer_input_cap_tokens: int
    """Largest transcript sent to a summarizer in one call; longer spans are chunked (map, then consolidate)."""
    summarizer_timeout_seconds: float
    """Longest one summarizer call may take in the manager before the next summarizer follows."""
    model_tokens_per_compaction: int | None = None
    """Most transcript tokens the model summarizers read in one of the manager's compactions; the rest goes to the
    extractive summarizer (`chainsum.manager._summarizers.SummarizerChain.model_tokens`). None: no bound."""

    @classmethod
    def from_config(
        cls,
        config: ManagerConfig,
        *,
        strategy: str | Strategy | None = None,
        summarizers: Sequence[AnySummarizer] | None = None,
    ) -> CompactionSettings:
        """The settings of `config`: its strategy (or `strategy`, a name or a `Strategy` object) behind the tail
        guard, and its summarizers (or `summarizers`, when given and not empty), each built now.

        Raises `ConfigError` (a `ValueError`) for a summarizer that cannot be made (an unknown provider prefix, a
        missing SDK) and `ValueError` for an unknown strategy name, both naming what was wrong."""
        options = StrategyOptions(
            summary_ratio=config.summary_ratio,
            preserve_recent=config.preserve_recent,
            min_summary_share=config.summary_ratio,
        )
        chosen = strategy if strategy is not None else config.strategy
        inner = strategy_named(chosen, options) if isinstance(chosen, str) else chosen
        return cls(
            strategy=_guarded(inner, config.preserve_recent),
            fallback=_guarded(AutoStrategy(summarize=False), config.preserve_recent),
            strategy_options=options,
            summarizers=tuple(summarizers) if summarizers else summarizers_from_config(config),
            preserve_recent=config.preserve_recent,
            max_depth=config.max_summary_chain_depth,
            summary_role="system" if config.summary_role == "system" else "user",
            summarizer_input_cap_tokens=config.summarizer_input_cap_tokens,
            summarizer_timeout_seconds=config.summarizer_timeout_seconds,
            model_tokens_per_compaction=config.model_tokens_per_compaction or None,
        )

    def with_strategy(self, name: str) -> CompactionSettings:
        """These settings with the strategy called `name` (behind the same guard); the summarizers are not built
        again. ValueError listing the names for an unknown one."""
        return replace(self, strategy=_guarded(strategy_named(name, self.strategy_options), self.preserve_recent))

    @property
    def summarizer(self) -> SummarizerLike:
        """The summarizer of a one-shot compaction (`compact_document`): the first configured one, called as it
        is. A command run on a file says when the model failed (the report's errors, exit 1) instead of falling
        back to the extractive summary unasked, as a live session must."""
        return cast("SummarizerLike", self.summarizers[0])

    async def compact(
        self,
        messages: Sequence[Message],
        *,
        summarizer: SummarizerLike | None,
        counter: TokenCounter,
        budget: int | None,
        hard_limit: int | None,
        provider: str,
        fallback: bool = False,
        summary_role: SummaryRole | None = None,
        header_tokens: int = 0,
        dry_run: bool = False,
        progress: ProgressCallback | None = None,
    ) -> CompactResult:
        """`chainsum.executor.compact` of `messages` with these settings: `strategy` (or `fallback`), the depth cap,
        the summary role (or `summary_role`, for a caller whose format cannot carry a system record) and the input
        cap less `header_tokens` (what the caller's summarizer adds before each transcript). The one place settings
        become the executor's arguments, so no surface can pass them differently."""
        return await compact(
            messages,
            self.fallback if fallback else self.strategy,
            summarizer=summarizer,
            counter=counter,
            budget=budget,
            hard_limit=hard_limit,
            provider=provider,
            max_depth=self.max_depth,
            summary_role=summary_role or self.summary_role,
            max_summarizer_input_tokens=max(self.summarizer_input_cap_tokens - header_tokens, _MIN_INPUT_TOKENS),
            dry_run=dry_run,
            progress=progress,
        )
