"""The executor: the one piece of code that applies plans to messages.

`compact` (and `compact_sync`) run any `chainsum.strategies.Strategy` round after round until the history fits the
budget, calling the summarizer concurrently (bounded), checking every plan, failing open on summarizer errors and
repairing the result for the provider. `CompactResult` says what happened, including what fell short;
`budget_floor` says what no compaction removes, so whether a budget can be reached at all.
"""

from ._compact import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_CHUNKS,
    DEFAULT_MAX_SUMMARIZER_INPUT_TOKENS,
    check_budget,
    check_hard_limit,
    compact,
    compact_sync,
)
from ._floor import BudgetFloor, budget_floor
from ._result import CompactResult, StepError
from ._run import ProgressCallback

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_MAX_CHUNKS",
    "DEFAULT_MAX_SUMMARIZER_INPUT_TOKENS",
    "BudgetFloor",
    "CompactResult",
    "ProgressCallback",
    "StepError",
    "budget_floor",
    "check_budget",
    "check_hard_limit",
    "compact",
    "compact_sync",
]
