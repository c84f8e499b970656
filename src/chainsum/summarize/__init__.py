"""Summarizers: the protocol, transcript rendering, the extractive default, LLM summarizers, map-reduce."""

from typing import TYPE_CHECKING, Any

from ._agent import error_lines, exit_status
from ._check import CHECKED_TITLE, CheckResult, check_summary, is_extractive
from ._extractive import Extraction, ExtractiveSummarizer, key_identifiers
from ._filler import EXCERPT_TITLE, is_call_id, is_filler
from ._items import TITLES as SECTION_TITLES
from ._mapreduce import CountLines, approx_tokens, summarize_chunked, to_state_snapshot, truncate_to_tokens
from ._protocol import Summarizer, SummarizerLike, call_summarizer, is_local
from ._reach import ReachMeter, reaching, report_unread
from ._transcript import (
    TRANSCRIPT_INSTRUCTIONS,
    ParsedTranscript,
    TranscriptBlock,
    TranscriptCase,
    clip_body,
    parse_transcript,
    parse_transcript_target,
    render_body,
    render_consolidation,
    render_transcript,
    transcript_reach,
)
from ._usage import SummarizerUsage, UsageMeter, metering, report_usage

__all__ = [
    "CHECKED_TITLE",
    "EXCERPT_TITLE",
    "SECTION_TITLES",
    "TRANSCRIPT_INSTRUCTIONS",
    "CheckResult",
    "CountLines",
    "Extraction",
    "ExtractiveStructuredSummarizer",
    "ExtractiveSummarizer",
    "ParsedTranscript",
    "ReachMeter",
    "StructuredSummarizer",
    "StructuredSummary",
    "Summarizer",
    "SummarizerLike",
    "SummarizerUsage",
    "TranscriptBlock",
    "TranscriptCase",
    "UsageMeter",
    "approx_tokens",
    "call_summarizer",
    "check_summary",
    "clip_body",
    "error_lines",
    "exit_status",
    "is_call_id",
    "is_extractive",
    "is_filler",
    "is_local",
    "key_identifiers",
    "metering",
    "parse_structured_summary",
    "parse_transcript",
    "parse_transcript_target",
    "reaching",
    "render_body",
    "render_consolidation",
    "render_transcript",
    "report_unread",
    "report_usage",
    "structured_instructions",
    "structured_summarizer",
    "summarize_chunked",
    "to_state_snapshot",
    "transcript_reach",
    "truncate_to_tokens",
]

_LAZY = {
    "ExtractiveStructuredSummarizer",
    "StructuredSummarizer",
    "StructuredSummary",
    "parse_structured_summary",
    "structured_instructions",
    "structured_summarizer",
}

if TYPE_CHECKING:
    from ._structured import (
        ExtractiveStructuredSummarizer,
        StructuredSummarizer,
        StructuredSummary,
        parse_structured_summary,
        structured_instructions,
        structured_summarizer,
    )


def __getattr__(name: str) -> Any:
    # The structured variant builds a pydantic model at import (~0.2 s): load it only when asked for, so that
    # `import chainsum` stays quick for callers who never use it.
    if name in _LAZY:
        from . import _structured

        return getattr(_structured, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
