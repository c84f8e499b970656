"""Names and texts fixed by the chain spec (``specs/chain-ast.md``) and the summarization spec."""

from __future__ import annotations

__all__ = [
    "FAKE_REASONING_SIGNATURE",
    "FALLBACK_REQUEST_ARGS",
    "FALLBACK_RESPONSE_CONTENT",
    "SUMMARIZATION_TOOL_ARGS",
    "SUMMARIZATION_TOOL_NAME",
    "SUMMARIZED_CONTENT_PREFIX",
]

FALLBACK_REQUEST_ARGS = "{}"
"""Arguments given to a tool call that arrived without any."""

FALLBACK_RESPONSE_CONTENT = "the call was not handled, please try again"
"""Content of the tool result that repair adds for a call that never got one."""

SUMMARIZATION_TOOL_NAME = "execute_task_and_return_summary"
"""The synthetic tool whose call/result pair carries a summary in the history (a Summarization body pair)."""

SUMMARIZATION_TOOL_ARGS = '{"question": "delegate and execute the task, then return the summary of the result"}'

FAKE_REASONING_SIGNATURE = "skip_thought_signature_validator"
"""Gemini accepts this in place of a real thought signature; used on synthetic summary calls when the content
they replace carried tool-call reasoning."""

SUMMARIZED_CONTENT_PREFIX = "[summarized content]\n"
"""Marks an assistant text as a summary written by chainsum (a Completion that replaced older pairs). The
spec names the constant but not its text; this one is short, unlikely in real output, and readable by the model."""
