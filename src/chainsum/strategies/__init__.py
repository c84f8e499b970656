"""Strategies: planners deciding what to summarize, mask or keep, as data (`Plan`); `chainsum.executor` applies
them.

- `AutoStrategy` (``auto``, the default): mask old tool output when that is enough, else one summary block over
  the oldest messages plus masks after it, landing just under the budget; past the hard limit, model-free last
  resorts.
- `RatioStrategy` (``ratio``): the oldest share of the messages into one summary block, the recent ones kept.
- `MaskStrategy` (``mask``): no model; old tool output masked, huge tool output clipped.
- `SectionsStrategy` (``sections``): the chain summarization spec.
- `SafeSplitStrategy` (``safe-split``): the history safe-split spec.

`STRATEGIES` names them all (the CLI and the manager use it); `TailGuard` keeps any of them out of a verbatim tail.
"""

from ..summarize import TranscriptCase
from ._auto import AutoStrategy
from ._guard import STRATEGIES, StrategyOptions, TailGuard, strategy_named, tail_need
from ._mask import CLIP_MARKER, MASK_PREFIX, MaskStrategy, clip_result, is_masked, mask_result, widened_mask
from ._mask_calls import ARGUMENT_MASK_PREFIX, mask_call
from ._note import NOTE_CHARS, Carried, archive_note, blocks_lines, messages_lines
from ._plan import Clip, DropBlocks, Evict, Mask, Plan, PlanContext, Step, Strategy, Summarize, SummarizePart
from ._ratio import RatioStrategy
from ._record import estimate_margin, least_record_tokens
from ._safe_split import SafeSplitConfig, SafeSplitStrategy
from ._sections import SectionsConfig, SectionsStrategy

__all__ = [
    "ARGUMENT_MASK_PREFIX",
    "CLIP_MARKER",
    "MASK_PREFIX",
    "NOTE_CHARS",
    "STRATEGIES",
    "AutoStrategy",
    "Carried",
    "Clip",
    "DropBlocks",
    "Evict",
    "Mask",
    "MaskStrategy",
    "Plan",
    "PlanContext",
    "RatioStrategy",
    "SafeSplitConfig",
    "SafeSplitStrategy",
    "SectionsConfig",
    "SectionsStrategy",
    "Step",
    "Strategy",
    "StrategyOptions",
    "Summarize",
    "SummarizePart",
    "TailGuard",
    "TranscriptCase",
    "archive_note",
    "blocks_lines",
    "clip_result",
    "estimate_margin",
    "is_masked",
    "least_record_tokens",
    "mask_call",
    "mask_result",
    "messages_lines",
    "strategy_named",
    "tail_need",
    "widened_mask",
]
