"""chainsum's own JSON form as a wire format: ``{"format": "chainsum", "messages": [...]}``.

It is the only format that expresses every canonical field, so converting to it never drops anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..messages import Message, messages_from_list, messages_to_list
from ._base import Conversation, Dropped, require_mapping

NAME = "chainsum"


def sniff(data: Any) -> int:
    if isinstance(data, dict) and cast(dict[str, Any], data).get("format") == NAME:
        return 3
    return 0


def load(data: Any) -> Conversation:
    doc = require_mapping(data, "", NAME)
    envelope = {k: v for k, v in doc.items() if k not in ("format", "messages")}
    return Conversation(tuple(messages_from_list(doc.get("messages"))), NAME, envelope)


def dump(
    messages: Sequence[Message],
    envelope: Mapping[str, Any] | None = None,
    dropped: list[Dropped] | None = None,
) -> Any:
    del dropped  # nothing is ever dropped
    return {"format": NAME, **(envelope or {}), "messages": messages_to_list(messages)}
