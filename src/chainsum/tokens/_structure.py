"""What a message costs beyond its text: the chat format's framing, tool calls, tool results, images and files.

Every counter shares this walk and differs only in how it counts a string, so the heuristic and tiktoken agree
on structure and the benchmark compares text estimation alone.

The constants follow OpenAI's published accounting for chat models (3 tokens of framing per message, the role,
1 more when a name is set, 3 to prime the reply) and extend it where that accounting says nothing: a tool call
costs its id, name and arguments plus a few tokens of JSON framing; a tool result its call id and content plus
framing. Anthropic and Gemini frame messages differently but by similar amounts; calibration from reported usage
(`CalibratedCounter`) absorbs the difference.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, assert_never

from ..messages import File, Image, Message, Opaque, Part, Reasoning, Text, ToolCall, ToolResult
from ._calibrated import CalibratedCounter
from ._media import file_tokens, image_tokens

if TYPE_CHECKING:
    from ._protocol import TokenCounter

__all__ = [
    "MESSAGE_OVERHEAD",
    "NAME_OVERHEAD",
    "PART_OVERHEAD",
    "REPLY_PRIMING",
    "TOOL_CALL_OVERHEAD",
    "TOOL_RESULT_OVERHEAD",
    "json_tokens",
    "message_cost",
    "reply_priming",
]

MESSAGE_OVERHEAD = 3
"""``<|start|>``, the separator after the role and ``<|end|>``; the role itself is counted as text."""
NAME_OVERHEAD = 1
"""A participant name adds a separator besides its own text."""
PART_OVERHEAD = 1
"""Each content part after the first: the block boundary (Anthropic and Gemini send a list of blocks)."""
TOOL_CALL_OVERHEAD = 8
"""The JSON framing around a call: type, ``function`` namespace, the keys ``id``, ``name``, ``arguments``."""
TOOL_RESULT_OVERHEAD = 4
"""The framing of a result: ``tool_call_id`` key and the message boundary inside a multi-result turn."""
REPLY_PRIMING = 3
"""Every request ends with ``<|start|>assistant<|message|>``, which the provider bills as prompt."""


def _reasoning_cost(reasoning: Reasoning | None, count_text: Callable[[str], int]) -> int:
    """Readable reasoning is sent back and counted as text; encrypted or redacted reasoning is decrypted by the
    provider, so we bill it at about a token per four decoded bytes (base64 text is 3/4 bytes per char).
    Signatures are verified, not read: they cost nothing."""
    if reasoning is None:
        return 0
    cost = count_text(reasoning.text) if reasoning.text else 0
    if reasoning.data:
        cost += math.ceil(len(reasoning.data) * 3 / 16)
    return cost


def _opaque_text(data: object) -> str:
    """The compact JSON the provider is sent; `repr` for data JSON cannot write (a cycle, a huge int)."""
    try:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    except (ValueError, TypeError, RecursionError):
        return repr(data)


def _part_cost(part: Part, count_text: Callable[[str], int]) -> int:
    match part:
        case Text():
            return count_text(part.text) + _reasoning_cost(part.reasoning, count_text)
        case ToolCall():
            return (
                TOOL_CALL_OVERHEAD
                + (count_text(part.id) if part.id else 0)
                + count_text(part.name)
                + count_text(part.arguments)
                + _reasoning_cost(part.reasoning, count_text)
            )
        case ToolResult():
            cost = TOOL_RESULT_OVERHEAD + (count_text(part.call_id) if part.call_id else 0)
            if part.name:
                cost += count_text(part.name)
            if isinstance(part.content, str):
                return cost + count_text(part.content)
            for i, sub in enumerate(part.content):
                cost += _part_cost(sub, count_text) + (PART_OVERHEAD if i else 0)
            return cost
        case Reasoning():
            return _reasoning_cost(part, count_text)
        case Image():
            return image_tokens(part)
        case File():
            return file_tokens(part, count_text)
        case Opaque():
            return count_text(_opaque_text(part.data))
        case _:  # pragma: no cover - exhaustiveness
            assert_never(part)


def message_cost(message: Message, count_text: Callable[[str], int]) -> int:
    """Tokens of one message in a prompt: framing, role, name and every part."""
    cost = MESSAGE_OVERHEAD + count_text(message.role)
    if message.name:
        cost += NAME_OVERHEAD + count_text(message.name)
    for i, part in enumerate(message.parts):
        cost += _part_cost(part, count_text) + (PART_OVERHEAD if i else 0)
    return cost


def reply_priming(messages: Sequence[Message]) -> int:
    """The reply priming a request adds, nothing for an empty history (there is no request)."""
    return REPLY_PRIMING if messages else 0


def json_tokens(counter: TokenCounter, value: object) -> int:
    """Tokens of what a request carries beside its messages as JSON (tool definitions, above all): its JSON text,
    keys sorted so that the same definitions always count the same; 0 for nothing. Every surface that reserves room
    for tool definitions (the proxy, each framework integration) counts them here.

    A client sends the same definitions with every request (Claude Code's are 80 KB), so the count of each
    distinct value is remembered (the last 64) for a counter whose counts do not move; a `CalibratedCounter`
    scales its base's remembered count by its factor as it stands."""
    if not value:
        return 0
    if isinstance(counter, CalibratedCounter):
        return counter.scale(json_tokens(counter.base, value))
    key = _json_key(value)
    try:
        remembered = _JSON_COUNTS.get((counter, key))
    except TypeError:  # a counter that cannot be a key (an unhashable user class): counted each time
        return counter.count_text(_json_text(value))
    if remembered is None:
        remembered = counter.count_text(key if isinstance(key, str) else _json_text(value))
        with _JSON_LOCK:  # integrations and the server's worker threads count at once: evict under one lock
            if len(_JSON_COUNTS) >= 64:
                _JSON_COUNTS.pop(next(iter(_JSON_COUNTS)), None)
            _JSON_COUNTS[(counter, key)] = remembered
    return remembered


_JSON_COUNTS: dict[tuple[TokenCounter, str | bytes], int] = {}
"""Remembered `json_tokens` counts, oldest first."""
_JSON_LOCK = threading.Lock()


def _json_text(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _json_key(value: object) -> str | bytes:
    """What tells one JSON value from another: orjson's bytes where it is installed (the server extra; a tenth of
    the standard library's time on 80 KB of definitions), else the text that is counted. Not sorted (sorting
    doubles orjson's time): the same definitions in another key order are one more entry with the same count,
    since what is counted is always the sorted text."""
    try:
        import orjson
    except ImportError:
        return _json_text(value)
    try:
        return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return _json_text(value)
