"""Strategies: planners deciding what to summarize, mask or keep (as data), and the one executor applying plans.

- `AutoStrategy` (``auto``, the default): mask old tool output, then oversized pairs, then sections, until the
  history fits the budget; over the hard limit (the window), clip the current turn's tool output as a last resort.
- `RatioStrategy` (``ratio``): the oldest share of the messages into one summary, the recent ones kept.
- `MaskStrategy` (``mask``): no model; old tool output masked, huge tool output clipped.
- `SectionsStrategy` (``sections``): the chain summarization spec.
- `SafeSplitStrategy` (``safe-split``): the history safe-split spec.

`compact` / `compact_sync` apply any of them, round after round, and return a `CompactResult`.
"""

from ._auto import AutoStrategy
from ._execute import (
    DEFAULT_MAX_SUMMARIZER_INPUT_TOKENS,
    CompactResult,
    ProgressCallback,
    StepError,
    compact,
    compact_sync,
)
from ._mask import CLIP_MARKER, MASK_PREFIX, MaskStrategy
from ._plan import Clip, Mask, Plan, PlanContext, Step, Strategy, Summarize, SummarizePart, SummaryForm, TranscriptCase
from ._ratio import RatioStrategy
from ._safe_split import SafeSplitConfig, SafeSplitStrategy
from ._sections import SectionsConfig, SectionsStrategy

__all__ = [
    "CLIP_MARKER",
    "DEFAULT_MAX_SUMMARIZER_INPUT_TOKENS",
    "MASK_PREFIX",
    "AutoStrategy",
    "Clip",
    "CompactResult",
    "Mask",
    "MaskStrategy",
    "Plan",
    "PlanContext",
    "ProgressCallback",
    "RatioStrategy",
    "SafeSplitConfig",
    "SafeSplitStrategy",
    "SectionsConfig",
    "SectionsStrategy",
    "Step",
    "StepError",
    "Strategy",
    "Summarize",
    "SummarizePart",
    "SummaryForm",
    "TranscriptCase",
    "compact",
    "compact_sync",
]
