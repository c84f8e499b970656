"""The chain: a conversation as a tree of sections, header and body pairs, per ``specs/chain-ast.md``."""

from ._build import RULES, Repair
from ._chain import Chain, contains_tool_call_reasoning
from ._constants import (
    FAKE_REASONING_SIGNATURE,
    FALLBACK_REQUEST_ARGS,
    FALLBACK_RESPONSE_CONTENT,
    SUMMARIZATION_TOOL_ARGS,
    SUMMARIZATION_TOOL_NAME,
    SUMMARIZED_CONTENT_PREFIX,
)
from ._cuts import safe_cuts, turn_starts
from ._ids import CHARSETS, IdTemplate, id_from_template, parse_template
from ._nodes import (
    BodyPair,
    CompletedCall,
    Header,
    PairKind,
    Section,
    ToolCallsInfo,
    contains_summarized_content,
    match_results,
    tool_calls_info,
)

__all__ = [
    "CHARSETS",
    "FAKE_REASONING_SIGNATURE",
    "FALLBACK_REQUEST_ARGS",
    "FALLBACK_RESPONSE_CONTENT",
    "RULES",
    "SUMMARIZATION_TOOL_ARGS",
    "SUMMARIZATION_TOOL_NAME",
    "SUMMARIZED_CONTENT_PREFIX",
    "BodyPair",
    "Chain",
    "CompletedCall",
    "Header",
    "IdTemplate",
    "PairKind",
    "Repair",
    "Section",
    "ToolCallsInfo",
    "contains_summarized_content",
    "contains_tool_call_reasoning",
    "id_from_template",
    "match_results",
    "parse_template",
    "safe_cuts",
    "tool_calls_info",
    "turn_starts",
]
