"""`provider_compaction`: which requests are the provider's to compact, and where it says the item is."""

from __future__ import annotations

import json
from typing import Any

from chainsum.server._native import provider_compaction


def check(body: dict[str, Any], history: str) -> str | None:
    return provider_compaction(body, json.dumps(body).encode(), history)


def test_context_management_of_either_api_is_the_providers() -> None:
    responses = {"input": [], "context_management": [{"type": "compaction", "compact_threshold": 1000}]}
    messages = {"messages": [], "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]}}
    assert check(responses, "input") == check(messages, "messages") == "provider compaction (context_management)"
    assert check({"input": [], "context_management": None}, "input") is None  # an empty value asks for nothing


def test_an_anthropic_edit_that_only_clears_thinking_leaves_the_turns_to_chainsum() -> None:
    thinking = {"edits": [{"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}}]}
    assert check({"messages": [], "context_management": thinking}, "messages") is None
    both = {"edits": [*thinking["edits"], {"type": "compact_20260112"}]}
    assert check({"messages": [], "context_management": both}, "messages") is not None
    assert check({"messages": [], "context_management": {"mode": "new"}}, "messages") is not None  # unknown shape


def test_an_item_or_block_is_named_with_where_it_stands() -> None:
    item = {"input": [{"role": "user", "content": "hi"}, {"type": "compaction", "encrypted_content": "x"}]}
    assert check(item, "input") == "provider compaction (compaction item at input[1])"
    block = {"messages": [{"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "compaction"}]}]}
    assert check(block, "messages") == "provider compaction (compaction block at messages[0].content[1])"


def test_the_word_in_a_message_is_not_a_compaction() -> None:
    said = {"messages": [{"role": "user", "content": [{"type": "text", "text": "compaction"}]}]}
    assert b'"compaction"' in json.dumps(said).encode()  # the fast check matches: the walk decides
    assert check(said, "messages") is None
    quoted = {"messages": [{"role": "user", "content": 'what does "compaction" mean?'}]}
    assert check(quoted, "messages") is None
