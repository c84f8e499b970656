"""Provider-native compaction: what the provider compacts, chainsum leaves alone (issue 34).

OpenAI's Responses API compacts on the server when a request carries ``context_management`` (a ``compaction``
entry with its ``compact_threshold``), and answers with an encrypted ``compaction`` item that the client sends back
in place of the turns it replaced; Anthropic's Messages API edits the context itself under ``context_management``
(``compact_20260112`` writes a ``compaction`` block, ``clear_tool_uses_20250919`` clears old tool results; an edit
that only drops old thinking, ``clear_thinking_20251015``, leaves the turns to chainsum). Such an
item is readable only by the provider that wrote it, and where it stands is what it means: a summary chainsum wrote
over it, or a cut that moved it, would lose what it carries. And a client that asked the provider to manage its
context has chosen that manager; a second one compacting beside it would fight it for the same turns.

So such a request goes upstream as the client's own bytes and the answer says why, in ``X-Chainsum-Skipped``
(`provider_compaction` names the field, or the item and where it is): a valid request chainsum chose not to touch,
like one whose history the upstream keeps (``previous_response_id``). ``POST /v1/responses/compact`` (the
standalone compaction) has no route of its own and is forwarded as every unknown path is (``unknown-route``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

__all__ = ["provider_compaction"]

_DEFERS_TO = ("compact_", "clear_tool_uses_")
"""Anthropic's context edits that manage what chainsum would (``compact_20260112`` summarizes, ``clear_tool_uses_*``
clears old tool results): with one of them the request is the provider's. Others (``clear_thinking_*``, which drops
old thinking blocks) leave the turns to chainsum, which compacts as usual and keeps the field as it came."""

_MARK = b'"compaction"'
"""In the raw body of every request that holds a compaction item or block (both are ``"type": "compaction"``):
looked for first, so that a request without one costs a substring search, not a walk over its history."""


def _manages(setting: object) -> bool:
    """Whether a ``context_management`` value asks the provider to compact or clear the turns: OpenAI's (a list
    of entries, ``compaction`` the one there is) always; Anthropic's (``{"edits": [...]}``) when an edit is one of
    `_DEFERS_TO`."""
    if isinstance(setting, list):
        return bool(cast(list[object], setting))
    if not isinstance(setting, dict):
        return bool(setting)
    edits = cast(dict[str, Any], setting).get("edits")
    if not isinstance(edits, list):
        return True  # a shape not known here: the provider's to read, and chainsum's to leave alone
    for edit in cast(list[object], edits):
        kind = cast(dict[str, Any], edit).get("type") if isinstance(edit, dict) else None
        if not isinstance(kind, str) or kind.startswith(_DEFERS_TO):
            return True
    return False


def provider_compaction(body: Mapping[str, Any], raw: bytes, history: str) -> str | None:
    """Why the request is the provider's to compact (the ``X-Chainsum-Skipped`` value), or None: it carries
    ``context_management`` that compacts or clears the turns (`_manages`), or its history (the `history` field of
    `body`, parsed from `raw`) holds a ``compaction`` item (Responses) or content block (Messages)."""
    if _manages(body.get("context_management")):
        return "provider compaction (context_management)"
    if _MARK not in raw:
        return None
    items = body.get(history)
    if not isinstance(items, list):
        return None
    for i, item in enumerate(cast(list[object], items)):
        if not isinstance(item, dict):
            continue
        entry = cast(dict[str, Any], item)
        if entry.get("type") == "compaction":
            return f"provider compaction (compaction item at {history}[{i}])"
        content = entry.get("content")
        if isinstance(content, list):
            for j, block in enumerate(cast(list[object], content)):
                if isinstance(block, dict) and cast(dict[str, Any], block).get("type") == "compaction":
                    return f"provider compaction (compaction block at {history}[{i}].content[{j}])"
    return None
