"""The excerpt a record block may carry after its summary: the span's last messages, verbatim in part.

Why: ``auto`` plans a summary of a fixed length and keeps verbatim the most messages that fit beside it; what the
budget leaves over is less than the next stretch of messages before the cut (else the cut would have moved back
over them). Handing that rest to the summary made the summary's length jump down each time a larger budget moved the
cut back, and a shorter summary of a shorter span lost identifiers a smaller budget had kept. So the rest quotes
that stretch instead, head and tail, as it would read if it were kept (old tool output masked, long call arguments
masked): with a larger budget the quote grows, until the stretch is kept verbatim and the cut moves back. Whatever a
quote holds at one budget, a larger budget holds too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..messages import Message, ToolCall, ToolResult
from ..strategies import mask_call, mask_result
from ..summarize import EXCERPT_TITLE, clip_body, render_body
from ..tokens import TokenCounter

__all__ = ["EXCERPT_TITLE", "excerpt_text"]


_CALL_ID = re.compile(r"\[tool call: ([^\s\]]{1,120}) id=[^\s\]]{1,200}\]")
_RESULT_ID = re.compile(r"\[tool result( [^\s\]]{1,120})? for [^\s\]]{0,200}( error)?\]")
"""A quoted call's and result's ids, left out: they pair a call with its result, which the quote shows by order,
and a record's text never lists tool-call ids (`chainsum.summarize._filler`)."""
_MIN_CHARS = 80
"""Below this an excerpt says too little to be worth its title."""


def _as_kept(message: Message, calls: dict[str, ToolCall]) -> Message:
    """`message` as a larger budget would keep it at most: tool output masked (when that shortens it), long call
    arguments masked."""
    if message.role == "tool":
        parts = tuple(_masked(p, calls.get(p.call_id)) if isinstance(p, ToolResult) else p for p in message.parts)
        return message.with_parts(parts)
    if message.tool_calls:
        return message.with_parts(tuple(mask_call(p) if isinstance(p, ToolCall) else p for p in message.parts))
    return message


def _masked(result: ToolResult, call: ToolCall | None) -> ToolResult:
    masked = mask_result(result, call)
    return masked if len(masked.text) < len(result.text) else result


def excerpt_text(messages: Sequence[Message], tokens: int, counter: TokenCounter) -> str:
    """`messages` rendered one after another (``[role] body``), as they would be kept, cut to head and tail so the
    text costs about `tokens`; empty when that leaves too little to say anything."""
    if tokens <= 0 or not messages:
        return ""
    calls = {c.id: c for m in messages for c in m.tool_calls if c.id}
    lines = [f"[{m.role}] {render_body(_as_kept(m, calls))}" for m in messages]
    body = _RESULT_ID.sub(r"[tool result\1\2]", _CALL_ID.sub(r"[tool call: \1]", "\n".join(lines)))
    chars = tokens * len(body) // max(1, counter.count_text(body)) - len(EXCERPT_TITLE) - 2
    for _ in range(4):  # counts are estimates: shrink until it fits
        if chars < _MIN_CHARS:
            return ""
        text = f"{EXCERPT_TITLE}\n{clip_body(body, chars)}"
        if counter.count_text(text) + 2 <= tokens:  # and the blank line before it
            return text
        chars = chars * 7 // 8
    return ""
