"""Any format: the manager takes the caller's items in their own wire format (the constructor's ``format=``, or
detected from the items) or chainsum `Message`s, and gives the history back in that same format, valid for the
provider, after a compaction too."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import pytest

from chainsum.chain import is_record_message
from chainsum.errors import FormatError
from chainsum.formats import load
from chainsum.manager import LIVE_FORMATS, ContextManager, ManagerConfig, count_marks
from chainsum.messages import Message, messages_to_list
from chainsum.rules import validate
from chainsum.store import MemoryArchive
from manager.wire_support import PER_ITEM, PROVIDER, WIRE_FORMATS, canonical, mixed_history, to_wire

WINDOW = 1500


def _manager(fmt: str | None, *, window: int = WINDOW, provider: str = "openai") -> ContextManager:
    return ContextManager(
        ManagerConfig(), context_window=window, archive=MemoryArchive(), format=fmt, provider=provider
    )


def _without_marks(item: Any) -> Any:
    """`item` (an Anthropic wire message or a `Message`) without the manager's cache mark on its last block, as
    the caller wrote it (a one-text-block content back to the string it was written as)."""
    if isinstance(item, Message):
        last = item.parts[-1]
        ns = {k: v for k, v in last.extras["anthropic"].items() if k != "fields"}
        fields = {k: v for k, v in last.extras["anthropic"]["fields"].items() if k != "cache_control"}
        ns = {**ns, "fields": fields} if fields else ns
        extras = {**{k: v for k, v in last.extras.items() if k != "anthropic"}, **({"anthropic": ns} if ns else {})}
        return replace(item, parts=(*item.parts[:-1], replace(last, extras=extras)))
    blocks = [dict(b) for b in item["content"]]
    blocks[-1].pop("cache_control")
    if len(blocks) == 1 and set(blocks[0]) == {"type", "text"} and blocks[0]["type"] == "text":
        return {**item, "content": blocks[0]["text"]}
    return {**item, "content": blocks}


def test_the_live_formats_are_the_documented_ones() -> None:
    assert set(LIVE_FORMATS) == {"openai", "openai-responses", "anthropic", "gemini", "bedrock", "chainsum"}


@pytest.mark.parametrize("fmt", [*WIRE_FORMATS, "messages"])
def test_each_format_comes_back_in_its_own_shape_after_a_compaction(fmt: str) -> None:
    items, system = to_wire(mixed_history(20), fmt)
    manager = _manager(fmt, window=2500, provider=PROVIDER[fmt])  # over the trigger, under the window
    prepared = manager.prepare_sync(items, system=system)
    assert prepared.changed and len(prepared.messages) < len(items)
    out = list(prepared.messages)
    marked = PROVIDER[fmt] == "anthropic"  # the manager's moving cache mark on the last block (`_breakpoints`)
    if marked:
        assert count_marks(out[-1]) == 1 and count_marks(items[-1]) == 0
        assert _without_marks(out[-1]) == items[-1]  # the mark is all that differs
        assert out[-2] is items[-2]  # the caller's own objects where the model sees them unchanged
        out[-1] = items[-1]
    back = canonical(out, fmt)  # it reads as the caller's own format
    assert validate(back, PROVIDER[fmt]) == []
    assert any(is_record_message(m) for m in back)
    # the current turn (a user request and its tool step), unchanged (the loaders mark a user item that follows
    # another, here the recall block, in `extras`: only what the model reads is compared)
    original = canonical(items, fmt)[-4:]
    if fmt == "bedrock":  # the recall block joins the user message's item there (Converse needs alternation)
        n = len(original[0].parts)
        assert back[-4].role == "user" and back[-4].parts[-n:] == original[0].parts
        back, original = back[-3:], original[1:]
    assert [(m.role, m.parts) for m in back[-len(original) :]] == [(m.role, m.parts) for m in original]
    if fmt == "messages":
        assert all(isinstance(m, Message) for m in out)
        assert out[-1] is items[-1]  # the caller's own objects where the model sees them unchanged
    else:
        assert all(isinstance(m, dict) for m in out)
        assert out[-1] == items[-1]
        if fmt in PER_ITEM and fmt != "bedrock":
            assert out[-1] is items[-1]


@pytest.mark.parametrize("fmt", [*WIRE_FORMATS, "messages"])
def test_every_request_of_a_growing_session_is_valid_in_its_format(fmt: str) -> None:
    hist = mixed_history(24)
    manager = _manager(fmt, window=1200, provider=PROVIDER[fmt])
    compactions = 0
    for end in range(3, len(hist) + 1):
        if hist[end - 1]["role"] != "user" and hist[end - 1]["role"] != "tool":
            continue  # a request is sent after a user message or a tool result
        items, system = to_wire(hist[:end], fmt)
        prepared = manager.prepare_sync(items, system=system)
        compactions += prepared.changed
        back = canonical(prepared.messages, fmt)
        assert validate(back, PROVIDER[fmt]) == [], (end, validate(back, PROVIDER[fmt])[:2])
        assert not prepared.over_window
        if fmt == "bedrock":  # Converse refuses two messages of one role in a row (reading merges them, so check
            roles = [item["role"] for item in prepared.messages]  # the wire items themselves)
            assert all(a != b for a, b in itertools.pairwise(roles)), (end, roles)
    assert compactions >= 3


def test_anthropic_system_argument_is_counted_and_never_changed() -> None:
    items, system = to_wire(mixed_history(20), "anthropic")
    assert isinstance(system, str) and system
    manager = _manager("anthropic", provider="anthropic")
    prepared = manager.prepare_sync(items, system=system)
    assert prepared.changed
    without = _manager("anthropic", provider="anthropic").prepare_sync(items)
    assert prepared.tokens_before > without.tokens_before  # the prompt outside the list takes room too
    assert all(m.role != "system" for m in canonical(prepared.messages, "anthropic"))


def test_chainsum_json_items_in_chainsum_json_items_out() -> None:
    messages = canonical(to_wire(mixed_history(20), "messages")[0], "messages")
    items = messages_to_list(messages)
    manager = _manager("chainsum")
    prepared = manager.prepare_sync(items)
    assert prepared.changed
    out: list[Any] = list(prepared.messages)
    assert all(isinstance(m, dict) and "parts" in m for m in out)
    back = list(load({"format": "chainsum", "messages": out}).messages)
    assert validate(back, "openai") == []


def test_an_unknown_format_is_refused_at_construction() -> None:
    with pytest.raises(FormatError, match="unknown live format"):
        _manager("yaml")


@pytest.mark.parametrize(
    "fmt",
    [
        "openai-responses",
        "gemini",
        "bedrock",
    ],
)
def test_the_format_is_detected_from_the_items(fmt: str) -> None:
    items, system = to_wire(mixed_history(20), fmt)
    prepared = _manager(None, provider=PROVIDER[fmt]).prepare_sync(items, system=system)
    back = canonical(prepared.messages, fmt)
    assert prepared.changed and validate(back, PROVIDER[fmt]) == []


def test_openai_items_need_no_format_argument() -> None:
    items, _ = to_wire(mixed_history(20), "openai")
    prepared = _manager(None).prepare_sync(items)
    assert prepared.changed and validate(canonical(prepared.messages, "openai"), "openai") == []


def test_anthropic_items_are_detected_and_stay_valid_for_anthropic() -> None:
    items, system = to_wire(mixed_history(20), "anthropic")
    problems: list[tuple[int, int, str]] = []
    for window in range(1000, 1600, 50):
        for n in (35, 47, 53):
            assert items[n - 1]["role"] == "user"
            prepared = _manager(None, window=window).prepare_sync(items[:n], system=system)  # items alone
            found = validate(canonical(prepared.messages, "anthropic"), "anthropic")
            problems += [(window, n, p.rule) for p in found]
    assert problems == []


def test_plain_text_first_then_anthropic_tool_blocks_are_read_as_the_provider_s_format() -> None:
    """A first request of plain text messages reads the same as OpenAI chat and as Anthropic; with
    ``provider="anthropic"`` and no ``format=``, the items are taken as Anthropic's, so the tool blocks that come
    later are understood (and never cut from their calls)."""
    items, system = to_wire(mixed_history(20), "anthropic")
    first_tool = next(i for i, item in enumerate(items) if not isinstance(item["content"], str))
    manager = _manager(None, provider="anthropic")
    manager.prepare_sync(items[:first_tool], system=system)
    prepared = manager.prepare_sync(items, system=system)
    back = canonical(prepared.messages, "anthropic")
    assert validate(back, "anthropic") == []
    assert any(m.tool_calls for m in back)


def test_a_bedrock_chat_keeps_its_roles_alternating_after_compactions() -> None:
    """Converse refuses two user messages in a row: the record of the earlier conversation (a user message) and
    the recall block join the kept user message's item rather than standing before it."""
    manager = ContextManager(
        ManagerConfig(recall_token_ratio=0.3),
        context_window=1200,
        archive=MemoryArchive(),
        format="bedrock",
        provider="bedrock",
    )
    items: list[dict[str, Any]] = []
    compactions = recalls = 0
    for i in range(40):
        ask = f"Day {i}: what about book B-{max(0, i - 20)}? " + "so " * 25  # asks about what was summarized
        items.append({"role": "user", "content": [{"text": ask}]})
        prepared = manager.prepare_sync(items)
        compactions += prepared.changed
        recalls += bool(prepared.recalled)
        roles = [item["role"] for item in prepared.messages]
        assert all(a != b for a, b in itertools.pairwise(roles)), (i, roles)
        assert validate(canonical(prepared.messages, "bedrock"), "bedrock") == []
        items.append({"role": "assistant", "content": [{"text": f"Noted B-{i}. " + "yes " * 25}]})
    assert compactions >= 2 and recalls >= 10


def test_codex_tool_definitions_item_survives_a_compaction() -> None:
    """Codex (Responses, code mode) sends its tools as a first ``additional_tools`` item with the developer role:
    a compaction keeps it first and byte for byte, like the developer prompt after it, and summarizes the steps."""
    tools = {"type": "additional_tools", "role": "developer", "tools": [{"type": "function", "name": "exec"}] * 20}
    prompt = {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be careful."}]}
    items: list[dict[str, Any]] = [tools, prompt, {"role": "user", "content": "Run seq 1 3000 twenty times."}]
    for step in range(20):
        call = f"call_{step}"
        items.append({"type": "custom_tool_call", "call_id": call, "name": "exec", "input": "seq 1 3000"})
        items.append({"type": "custom_tool_call_output", "call_id": call, "output": "\n".join(map(str, range(900)))})
    manager = ContextManager(ManagerConfig(), context_window=8_000, archive=MemoryArchive(), format="openai-responses")
    prepared = manager.prepare_sync(items)
    assert prepared.tokens_after < prepared.tokens_before
    assert list(prepared.messages[:2]) == [tools, prompt]
    assert sum(isinstance(x, dict) and x.get("type") == "additional_tools" for x in prepared.messages) == 1
