"""The context manager layer: `ContextManager` (call `prepare` before every model request), its configuration and
the `CompactionSettings` built from it, `compact_document` (what ``chainsum compact`` does, as a call), events,
context windows, recall, session replay, `PhaseTimes` (where the time of `prepare` goes), and `ObjectReader` /
`GroupReader` / `ToolTokens`, through which every framework integration reads its framework's messages and tools
incrementally.

The modules of this package are private (``_name.py``); every other package, the benchmarks and the tests of other
layers import only the names below (``tests/test_layers.py`` holds them to it)."""

from ._breakpoints import count_marks
from ._build import has_summary_text, no_summary_text
from ._codec import LIVE_FORMATS
from ._compaction import CompactionSettings
from ._config import ENV_VARS, ConfigError, EnvVar, ManagerConfig, read_dotenv
from ._document import CompactedDocument, compact_document, compact_document_sync
from ._events import (
    ContextSummarizedEvent,
    EventBus,
    EventCallback,
    ManagerEvent,
    SummarizationEvent,
    SummarizationFailedEvent,
    SummarizationReason,
    WindowExceededEvent,
    detect_summarization,
)
from ._manager import ContextManager
from ._policy import SessionState
from ._profile import PHASES, Phase, PhaseTime, PhaseTimes
from ._reader import GroupReader, ObjectReader, ToolTokens, starts_with
from ._recall import RecallTool, is_recall_message, is_recall_text
from ._replay import CountingSummarizer, Prices, ReplayReport, TurnReport, replay, replay_sync, request_indices
from ._request import Prepared
from ._summarizers import AnySummarizer
from ._summarizers_config import summarizer_specs, summarizers_from_config
from ._windows import CONTEXT_WINDOWS, UnknownModelError, context_window, known_window

__all__ = [
    "CONTEXT_WINDOWS",
    "ENV_VARS",
    "LIVE_FORMATS",
    "PHASES",
    "AnySummarizer",
    "CompactedDocument",
    "CompactionSettings",
    "ConfigError",
    "ContextManager",
    "ContextSummarizedEvent",
    "CountingSummarizer",
    "EnvVar",
    "EventBus",
    "EventCallback",
    "GroupReader",
    "ManagerConfig",
    "ManagerEvent",
    "ObjectReader",
    "Phase",
    "PhaseTime",
    "PhaseTimes",
    "Prepared",
    "Prices",
    "RecallTool",
    "ReplayReport",
    "SessionState",
    "SummarizationEvent",
    "SummarizationFailedEvent",
    "SummarizationReason",
    "ToolTokens",
    "TurnReport",
    "UnknownModelError",
    "WindowExceededEvent",
    "compact_document",
    "compact_document_sync",
    "context_window",
    "count_marks",
    "detect_summarization",
    "has_summary_text",
    "is_recall_message",
    "is_recall_text",
    "known_window",
    "no_summary_text",
    "read_dotenv",
    "replay",
    "replay_sync",
    "request_indices",
    "starts_with",
    "summarizer_specs",
    "summarizers_from_config",
]
