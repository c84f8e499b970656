"""Comparing Anthropic requests the proxy sent with the one mark the manager moves taken off.

On a compacted session whose client marks none of its messages, the manager puts a ``cache_control`` mark on the
last block of the request's last message (`chainsum.manager._breakpoints`), which moves to the newest message on the
next request; a message whose content was a string then goes as the one text block it stands for. These helpers
compare requests, or a message with the client's, as if that mark were not there."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Dict = dict[str, Any]


def unmarked_end(message: Dict) -> Dict:
    """`message` with no mark on its last block, its content as blocks."""
    content = message["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else [dict(b) for b in content]
    if blocks:
        blocks[-1].pop("cache_control", None)
    return {**message, "content": blocks}


def same_message(sent: Dict, client: Dict) -> bool:
    """`sent` is the client's message, or it with the manager's mark on its last block."""
    return sent == client or unmarked_end(sent) == unmarked_end(client)


def last_message(messages: Sequence[Dict]) -> int:
    return max((k for k, m in enumerate(messages) if m["role"] != "system"), default=-1)


def extends(previous: Sequence[Dict], sent: Sequence[Dict]) -> bool:
    """`sent` is `previous` plus new messages, byte for byte but for the mark the manager moved off `previous`'s
    last message."""
    k = last_message(previous)
    if len(sent) < len(previous) or k < 0:
        return list(sent[: len(previous)]) == list(previous)
    head, tail = list(previous[:k]), list(previous[k + 1 :])
    return (
        list(sent[:k]) == head
        and unmarked_end(sent[k]) == unmarked_end(previous[k])
        and list(sent[k + 1 : len(previous)]) == tail
    )
