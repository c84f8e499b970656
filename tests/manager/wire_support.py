"""Helpers of the feature tests of the manager: one OpenAI-dict history written in every live wire format, and the
output of `prepare` read back as canonical messages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from chainsum.formats import dump, load
from chainsum.messages import Message
from manager.manager_support import SYSTEM, Dict, tool_turn, turn

WIRE_FORMATS = ("openai", "openai-responses", "anthropic", "gemini", "bedrock")
"""The live formats whose items are plain dicts (`chainsum` is tested on its own)."""

PROVIDER = {
    "openai": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "bedrock": "bedrock",
    "messages": "anthropic",
}
"""The provider whose rules each format's output is checked against."""

PER_ITEM = ("openai", "anthropic", "gemini")
"""Formats whose items each convert alone, so the manager hands the caller's own tail items back."""


def mixed_history(turns: int) -> list[Dict]:
    """A system prompt, then turns alternating plain questions and tool calls (OpenAI chat dicts)."""
    hist: list[Dict] = [SYSTEM]
    for i in range(turns):
        hist += tool_turn(i) if i % 2 else turn(i)
    return hist


def to_wire(openai_items: Sequence[Dict], fmt: str) -> tuple[list[Any], object]:
    """`openai_items` as the items of `fmt` and the system prompt that format keeps outside its list (or None)."""
    messages = list(load(list(openai_items), format="openai").messages)
    if fmt == "messages":
        return cast(list[Any], messages), None
    wire = dump(messages, to=fmt)
    if isinstance(wire, Mapping):
        doc = cast(Mapping[str, Any], wire)
        key = next(k for k in ("messages", "contents", "input") if k in doc)
        system = doc.get("system", doc.get("systemInstruction"))
        return list(cast(list[Any], doc[key])), system
    return list(cast(list[Any], wire)), None


def canonical(items: Sequence[Any], fmt: str) -> list[Message]:
    """The output of `prepare` as canonical messages."""
    if fmt == "messages":
        return [cast(Message, m) for m in items]
    return list(load(list(items), format=fmt).messages)
