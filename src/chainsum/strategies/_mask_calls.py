"""Masking the arguments of old tool calls: the other half of an agent's tool traffic.

A coding agent writes files through its tool calls: a ``Write`` or ``Edit`` call carries the whole new text in its
arguments, and in the Claude Code corpus those arguments are a fifth of the session (25K of 150K tokens in one,
30K of 127K in the other). Masking only tool *results* leaves every file the agent ever wrote in the context, long
after the file changed again; Anthropic's ``clear_tool_uses`` edit has ``clear_tool_inputs`` for the same reason.

Only long string values are masked, each by a placeholder that says how long it was and which identifiers it
mentioned; every other field (the file path, a flag, a short command) stays as it was, so the call still reads as
what it did and the arguments stay a JSON object every provider accepts. The original is archived like every
other edit, and `chainsum.executor.refill` gives it back when the budget has room.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, cast

from ..messages import ToolCall
from ..summarize import key_identifiers

__all__ = ["ARGUMENT_MASK_PREFIX", "call_mask_saving", "is_call_masked", "mask_call"]

ARGUMENT_MASK_PREFIX = "[chainsum: argument masked"
"""Start of the placeholder that replaces a long string value in a masked call's arguments."""

_LONG_VALUE_CHARS = 300
"""String values longer than this are masked; shorter ones (paths, flags, short commands) stay."""
_KEEP_CHARS = 160
"""Most characters of identifiers a value's placeholder keeps..."""
_KEEP_SHARE = 0.1
"""...and at most this share of the value's length."""
_PLACEHOLDER_FRAME = len(f"{ARGUMENT_MASK_PREFIX}: 1000000 characters; mentions: ]")
_MAX_DEPTH = 20


def is_call_masked(call: ToolCall) -> bool:
    """Whether some value of the call's arguments is already a placeholder (masking recognizes its own work)."""
    return ARGUMENT_MASK_PREFIX in call.arguments


def _room(value: str) -> int:
    return min(_KEEP_CHARS, int(len(value) * _KEEP_SHARE))


def _placeholder(value: str) -> str:
    kept = key_identifiers(value, _room(value))
    mentions = f"; mentions: {', '.join(kept)}" if kept else ""
    return f"{ARGUMENT_MASK_PREFIX}: {len(value)} characters{mentions}]"


def _gain(value: str) -> int:
    """Characters masking `value` removes at least (its placeholder at its longest); 0 for a value left alone."""
    if len(value) <= _LONG_VALUE_CHARS or value.startswith(ARGUMENT_MASK_PREFIX):
        return 0
    return len(value) - _PLACEHOLDER_FRAME - _room(value)


def _masked(value: Any, build: bool, depth: int = 0) -> tuple[Any, int]:
    """`value` with its long strings replaced by placeholders (`build` False: left as it is, only counted), and how
    many characters that removes at least. Planning counts without building: only the calls masked need their
    identifiers read."""
    if isinstance(value, str):
        gain = _gain(value)
        return (_placeholder(value) if gain and build else value), gain
    if depth >= _MAX_DEPTH:
        return value, 0
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        saved = 0
        for key, item in cast(dict[str, Any], value).items():
            out[key], gain = _masked(item, build, depth + 1)
            saved += gain
        return out, saved
    if isinstance(value, list):
        items: list[Any] = []
        saved = 0
        for item in cast(list[Any], value):
            new, gain = _masked(item, build, depth + 1)
            items.append(new)
            saved += gain
        return items, saved
    return value, 0


def _parsed(arguments: str) -> dict[str, Any] | list[Any] | None:
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):
        return None
    return cast(dict[str, Any] | list[Any], value) if isinstance(value, dict | list) else None


@lru_cache(maxsize=4096)
def _chars_saved(arguments: str) -> int:
    """`_masked`'s count for `arguments`, remembered: planning reads it for every old call, each round."""
    if len(arguments) <= _LONG_VALUE_CHARS:
        return 0
    value = _parsed(arguments)
    return 0 if value is None else _masked(value, build=False)[1]


def call_mask_saving(call: ToolCall) -> int:
    """About how many characters masking `call` removes (0: nothing worth masking, or arguments that are not a
    JSON object or array, which are left alone)."""
    if is_call_masked(call):
        return 0
    return _chars_saved(call.arguments)


def mask_call(call: ToolCall) -> ToolCall:
    """`call` with every long string value of its arguments replaced by a placeholder (see the module docstring);
    the call unchanged when its arguments are not JSON or hold nothing long."""
    value = _parsed(call.arguments)
    if value is None:
        return call
    masked, saved = _masked(value, build=True)
    if saved <= 0:
        return call
    return ToolCall(
        id=call.id,
        name=call.name,
        arguments=json.dumps(masked, ensure_ascii=False),
        reasoning=call.reasoning,
        extras=call.extras,
    )
