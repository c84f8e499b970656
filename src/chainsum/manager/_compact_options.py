"""`compact_options`: the arguments of `chainsum.executor.compact` that the configuration decides, in one place, so
that ``chainsum compact`` and the service's stateless ``POST /api/compact`` compact the same way."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict, cast

from ..chain import SummaryRole
from ..strategies import Strategy, StrategyOptions, strategy_named
from ._config import ManagerConfig
from ._summarizers_config import summarizers_from_config

if TYPE_CHECKING:
    from ..summarize import SummarizerLike

__all__ = ["CompactOptions", "compact_options"]


class CompactOptions(TypedDict):
    strategy: Strategy
    summarizer: SummarizerLike
    max_depth: int
    summary_role: SummaryRole
    max_summarizer_input_tokens: int


def compact_options(config: ManagerConfig) -> CompactOptions:
    """The strategy, the first configured summarizer (``SUMMARIZATION_MODEL_ID``, else the extractive one), the depth
    cap, the summary role and the summarizer input cap of `config`. Raises `ValueError` for a summarizer that cannot
    be made (an unknown provider prefix, say)."""
    summarizer = cast("SummarizerLike", summarizers_from_config(config)[0])
    return {
        "strategy": strategy_named(config.strategy, StrategyOptions(summary_ratio=config.summary_ratio)),
        "summarizer": summarizer,
        "max_depth": config.max_summary_chain_depth,
        "summary_role": "system" if config.summary_role == "system" else "user",
        "max_summarizer_input_tokens": config.summarizer_input_cap_tokens,
    }
