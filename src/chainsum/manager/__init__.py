"""The context manager layer: `ContextManager` (call `prepare` before every model request), the archive protocol it
writes removed messages to, summary records, events, configuration and context windows."""

from ._archive import Archive, ArchiveState, MemoryArchive, StateSnapshot
from ._config import ENV_VARS, ConfigError, EnvVar, ManagerConfig, read_dotenv
from ._events import (
    ContextSummarizedEvent,
    EventBus,
    EventCallback,
    ManagerEvent,
    SummarizationEvent,
    SummarizationFailedEvent,
    SummarizationReason,
    detect_summarization,
    is_summary_message,
)
from ._manager import ContextManager, Prepared
from ._manager_calls import AnySummarizer
from ._manager_policy import SessionState
from ._records import (
    MAX_FACET_ITEMS,
    MAX_KEY_POINTS,
    SummaryContext,
    SummaryRecord,
    canonical_json,
    message_sha256,
    sha256_all,
)
from ._replay import Prices, ReplayReport, TurnReport, replay, replay_sync
from ._windows import CONTEXT_WINDOWS, UnknownModelError, context_window

__all__ = [
    "CONTEXT_WINDOWS",
    "ENV_VARS",
    "MAX_FACET_ITEMS",
    "MAX_KEY_POINTS",
    "AnySummarizer",
    "Archive",
    "ArchiveState",
    "ConfigError",
    "ContextManager",
    "ContextSummarizedEvent",
    "EnvVar",
    "EventBus",
    "EventCallback",
    "ManagerConfig",
    "ManagerEvent",
    "MemoryArchive",
    "Prepared",
    "Prices",
    "ReplayReport",
    "SessionState",
    "StateSnapshot",
    "SummarizationEvent",
    "SummarizationFailedEvent",
    "SummarizationReason",
    "SummaryContext",
    "SummaryRecord",
    "TurnReport",
    "UnknownModelError",
    "canonical_json",
    "context_window",
    "detect_summarization",
    "is_summary_message",
    "message_sha256",
    "read_dotenv",
    "replay",
    "replay_sync",
    "sha256_all",
]
