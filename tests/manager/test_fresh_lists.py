"""Fresh lists: an app that rebuilds its history from a database on every request hands `prepare` a new list of new
(equal) objects each time. That must give exactly what handing it the same objects gives, cost only the conversion
of the new items, and an edited, retried or dropped message must be noticed: the output never holds the stale one."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

import pytest

import chainsum.manager._codec as codec_module
from chainsum.manager import ContextManager, ManagerConfig
from chainsum.messages import Message, message_from_dict, message_to_dict
from chainsum.store import MemoryArchive
from chainsum.testing.sessions import chat
from manager.manager_support import Dict
from manager.wire_support import WIRE_FORMATS, mixed_history, to_wire


def _dump(items: Sequence[Any]) -> str:
    return json.dumps([message_to_dict(m) if isinstance(m, Message) else m for m in items], sort_keys=True)


def _chat_requests(n: int) -> list[list[Dict]]:
    """The requests of a generated chat: the history up to each user message."""
    session = chat(n)
    return [session.messages[: i + 1] for i, m in enumerate(session.messages) if m["role"] == "user"]


def _manager(**kwargs: Any) -> ContextManager:
    return ContextManager(ManagerConfig(), context_window=2000, archive=MemoryArchive(), **kwargs)


def test_fresh_equal_dicts_give_exactly_the_output_of_the_same_objects() -> None:
    requests = _chat_requests(240)
    same, fresh = _manager(), _manager()
    compactions = 0
    for request in requests:
        a = same.prepare_sync(request)  # slices of one list: the very same dict objects every time
        b = fresh.prepare_sync(copy.deepcopy(request))  # rebuilt from a database: equal, but all new
        assert _dump(a.messages) == _dump(b.messages)
        assert (a.changed, a.recalled, a.tokens_after, a.over_window) == (
            b.changed,
            b.recalled,
            b.tokens_after,
            b.over_window,
        )
        compactions += a.changed
    assert compactions >= 3  # the window is small enough for the mapping to matter
    assert same.state.summarizations == fresh.state.summarizations


@pytest.mark.parametrize("fmt", WIRE_FORMATS)
def test_fresh_lists_are_equal_in_every_wire_format(fmt: str) -> None:
    hist = mixed_history(40)
    same = ContextManager(ManagerConfig(), context_window=2500, archive=MemoryArchive(), format=fmt)
    fresh = ContextManager(ManagerConfig(), context_window=2500, archive=MemoryArchive(), format=fmt)
    for end in range(5, len(hist) + 1, 4):  # each request stops before a turn's final answer
        items, system = to_wire(hist[: end - 1], fmt)
        a = same.prepare_sync(items, system=system)
        b = fresh.prepare_sync(copy.deepcopy(items), system=copy.deepcopy(system))
        assert _dump(a.messages) == _dump(b.messages)
    assert same.state.summarizations >= 2 and same.state.summarizations == fresh.state.summarizations


def test_fresh_message_objects_give_the_same_output() -> None:
    requests = _chat_requests(160)
    same, fresh = _manager(), _manager()
    base = [message_from_dict(message_to_dict(m)) for m in to_wire(requests[-1], "messages")[0]]
    for request in requests:
        mine = base[: len(request)]
        rebuilt = [message_from_dict(message_to_dict(m)) for m in mine]
        assert all(x == y and x is not y for x, y in zip(mine, rebuilt, strict=True))
        a, b = same.prepare_sync(mine), fresh.prepare_sync(rebuilt)
        assert _dump(a.messages) == _dump(b.messages)
    assert same.state.summarizations >= 2


def test_a_fresh_list_costs_only_the_conversion_of_its_new_items(monkeypatch: pytest.MonkeyPatch) -> None:
    converted: list[int] = []
    real_load = codec_module.load

    def counting_load(data: Any, format: str | None = None) -> Any:
        converted.append(len(data))
        return real_load(data, format=format)

    monkeypatch.setattr(codec_module, "load", counting_load)
    manager = _manager()
    previous = 0
    quiet_calls = 0
    for request in _chat_requests(200):
        converted.clear()
        prepared = manager.prepare_sync(copy.deepcopy(request))
        # a compaction, or an attempt that folded recall blocks in, re-reads the verbatim tail once (`_verify`); a
        # quiet call must not
        if not prepared.rewritten:
            assert sum(converted) == len(request) - previous
            quiet_calls += 1
        previous = len(request)
    assert quiet_calls >= 80 and manager.state.summarizations >= 3


@pytest.mark.parametrize("fmt", WIRE_FORMATS)
def test_a_history_sent_again_unchanged_counts_no_message_again(fmt: str) -> None:
    """A client retrying its request sends the same history: the last item is read again (it may have been edited
    in place), but when it reads as before nothing is counted again."""
    manager, hist = _compacted(fmt)
    items, system = to_wire([*hist, {"role": "user", "content": "and the zebra?"}], fmt)
    first = manager.prepare_sync(items, system=system)
    counted: list[Message] = []
    real = manager.counter.count_message

    def counting(message: Message) -> int:
        counted.append(message)
        return real(message)

    manager.counter.count_message = counting  # type: ignore[method-assign]
    again = manager.prepare_sync(items, system=system)
    fresh = manager.prepare_sync(copy.deepcopy(items), system=system)
    assert _dump(again.messages) == _dump(fresh.messages) == _dump(first.messages)
    assert again.tokens_after == fresh.tokens_after == first.tokens_after
    assert counted == []


def _compacted(fmt: str) -> tuple[ContextManager, list[Dict]]:
    """A manager of `fmt` that has compacted a tool-using history several times, and that history (OpenAI dicts,
    ending with an assistant answer)."""
    manager = ContextManager(ManagerConfig(), context_window=2500, archive=MemoryArchive(), format=fmt)
    hist = mixed_history(30)
    for end in range(5, len(hist) + 1, 4):
        items, system = to_wire(hist[: end - 1], fmt)
        manager.prepare_sync(copy.deepcopy(items), system=system)
    assert manager.state.summarizations >= 1
    return manager, hist


def _send(manager: ContextManager, openai_items: list[Dict], fmt: str) -> str:
    items, system = to_wire(openai_items, fmt)
    return _dump(manager.prepare_sync(copy.deepcopy(items), system=system).messages)


@pytest.mark.parametrize("fmt", WIRE_FORMATS)
def test_a_retried_last_user_message_replaces_the_old_one(fmt: str) -> None:
    manager, hist = _compacted(fmt)
    first = _send(manager, [*hist, {"role": "user", "content": "FIRST-TRY which zebra is fastest?"}], fmt)
    assert "FIRST-TRY" in first
    retried = _send(manager, [*hist, {"role": "user", "content": "SECOND-TRY which zebra is fastest?"}], fmt)
    assert "SECOND-TRY" in retried and "FIRST-TRY" not in retried


@pytest.mark.parametrize("fmt", WIRE_FORMATS)
def test_a_dropped_last_message_is_gone_from_the_output(fmt: str) -> None:
    manager, hist = _compacted(fmt)
    assert "DROPPED-QUESTION" in _send(manager, [*hist, {"role": "user", "content": "DROPPED-QUESTION zebra?"}], fmt)
    after = _send(manager, hist, fmt)
    assert "DROPPED-QUESTION" not in after


@pytest.mark.parametrize("fmt", WIRE_FORMATS)
def test_a_retried_tool_result_replaces_the_old_one(fmt: str) -> None:
    manager, hist = _compacted(fmt)
    assert hist[-2]["role"] == "tool"
    old_result = hist[-2]["content"]
    assert old_result in _send(manager, hist[:-1], fmt)
    retried = copy.deepcopy(hist[:-1])
    retried[-1]["content"] = "RETRIED-TOOL-RESULT"
    out = _send(manager, retried, fmt)
    assert "RETRIED-TOOL-RESULT" in out and old_result not in out


def test_an_edit_inside_a_summarized_range_drops_that_summary() -> None:
    session = chat(120)
    messages = copy.deepcopy(session.messages)
    messages[1]["content"] += " My locker code is ZX-9911."
    manager = _manager()
    request: list[Dict] = []
    for i in range(1, 100):
        if messages[i]["role"] == "user":
            request = messages[: i + 1]
            manager.prepare_sync(copy.deepcopy(request))
    assert manager.state.summarizations >= 2
    assert "ZX-9911" in _dump(manager.prepare_sync(copy.deepcopy(request)).messages)  # kept by the summary
    edited = copy.deepcopy(request)
    edited[1]["content"] = edited[1]["content"].replace("ZX-9911", "QQ-4321")
    out = _dump(manager.prepare_sync(edited).messages)
    assert "ZX-9911" not in out  # the summary of the old text is not applied to the new history
    assert "QQ-4321" in out


@pytest.mark.parametrize("fmt", WIRE_FORMATS)
def test_a_last_message_edited_in_place_is_sent_as_edited(fmt: str) -> None:
    manager, hist = _compacted(fmt)
    items, system = to_wire([*hist, {"role": "user", "content": "ORIGINAL-QUESTION about the zebra"}], fmt)
    first = manager.prepare_sync(items, system=system)
    assert "ORIGINAL-QUESTION" in _dump(first.messages)
    baseline = manager.prepare_sync(items, system=system)  # the count on whatever the first request left mapped
    longer = "EDITED-QUESTION" + " with many more words" * 40
    edited = json.loads(json.dumps(items[-1]).replace("ORIGINAL-QUESTION", longer))
    items[-1].clear()
    items[-1].update(edited)  # the same list and the same dict, edited in place
    prepared = manager.prepare_sync(items, system=system)
    out = _dump(prepared.messages)
    assert "EDITED-QUESTION" in out and "ORIGINAL-QUESTION" not in out
    # the running count follows the edit too (the history's, recall blocks aside: a block pinned for the original
    # question no longer stands for the edited one)
    assert prepared.tokens_before - prepared.recall_tokens >= baseline.tokens_before - baseline.recall_tokens + 100


def test_an_edited_message_is_not_recalled_in_its_old_version() -> None:
    session = chat(120)
    messages = copy.deepcopy(session.messages)
    messages[1]["content"] += " My locker code is ZX-9911."
    manager = ContextManager(ManagerConfig(recall_token_ratio=0.3), context_window=2000, archive=MemoryArchive())
    request: list[Dict] = []
    for i in range(1, 100):
        if messages[i]["role"] == "user":
            request = messages[: i + 1]
            manager.prepare_sync(copy.deepcopy(request))
    assert manager.state.summarizations >= 2
    edited = copy.deepcopy(request)
    edited[1]["content"] = edited[1]["content"].replace("ZX-9911", "QQ-4321")
    assert "ZX-9911" not in _dump(manager.prepare_sync(edited).messages)
    asked = [*edited, {"role": "assistant", "content": "Sure."}, {"role": "user", "content": "What is my locker code?"}]
    prepared = manager.prepare_sync(asked)
    out = _dump(prepared.messages)
    assert "QQ-4321" in out
    assert "ZX-9911" not in out, prepared.recalled
    assert manager.state.retracted  # stored: another process, or this one restarted, leaves them out too
    again = ContextManager(ManagerConfig(recall_token_ratio=0.3), context_window=2000, archive=manager.archive)
    assert "ZX-9911" not in _dump(again.prepare_sync(copy.deepcopy(asked)).messages)


def test_a_caller_that_keeps_the_summaries_it_was_given_retracts_nothing_and_still_recalls() -> None:
    # Callers that send back what they were given (state-mode integrations) hold the summaries themselves: their
    # history no longer matches the mapping, but nothing of what was summarized went stale.
    session = chat(120)
    messages = copy.deepcopy(session.messages)
    messages[1]["content"] += " My locker code is ZX-9911."
    manager = ContextManager(ManagerConfig(recall_token_ratio=0.3), context_window=2000, archive=MemoryArchive())
    history: list[Any] = [messages[0]]
    for m in messages[1:100]:
        history.append(m)
        if m["role"] == "user":
            history = list(manager.prepare_sync(history).messages)
    assert manager.state.summarizations >= 2
    history = [
        *history,
        {"role": "assistant", "content": "Sure."},
        {"role": "user", "content": "What is my locker code?"},
    ]
    prepared = manager.prepare_sync(history)
    assert manager.state.retracted == ()
    assert "ZX-9911" in _dump(prepared.messages)


def _anthropic_step(i: int) -> list[Dict]:
    call = f"toolu_{i:024d}"
    return [
        {"role": "assistant", "content": [{"type": "tool_use", "id": call, "name": "Bash", "input": {"n": i}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": f"output {i}"}]},
    ]


def _marked(items: list[Dict]) -> list[Dict]:
    """`items` with Claude Code's marker on the last block of the newest message only."""
    out = copy.deepcopy(items)
    out[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return out


def test_an_earlier_item_changed_converts_again_only_from_it() -> None:
    """Claude Code moves its ``cache_control`` marker to the newest message on every request, so each request is
    the previous one with its last message edited plus new ones: only from the edited item on is converted again
    (the whole history was, every request), and the messages are those a fresh read gives."""
    hist: list[Dict] = [{"role": "user", "content": [{"type": "text", "text": "start"}]}]
    for i in range(6):
        hist += _anthropic_step(i)
    codec = codec_module.Codec("anthropic")
    codec.read(_marked(hist))
    grown = _marked(hist + _anthropic_step(6))
    kept = codec.read(grown)
    assert codec.fresh_from == len(hist) - 1 and kept == len(hist) - 1
    fresh = codec_module.Codec("anthropic")
    fresh.read(grown)
    assert codec.messages == fresh.messages


def _responses_step(i: int) -> list[Dict]:
    call = f"call_{i}"
    return [
        {"type": "reasoning", "id": f"rs_{i}", "summary": [], "encrypted_content": f"enc-{i}"},
        {"type": "function_call", "call_id": call, "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": call, "output": f"output {i}"},
    ]


def test_an_agent_loop_in_responses_items_converts_only_from_the_last_tool_output() -> None:
    """Codex's whole loop is one user turn; each request converted every step again. A tool call's output ends the
    run of items that reads as one assistant message, so conversion restarts there."""
    hist: list[Dict] = [{"role": "user", "content": "fix the build"}]
    for i in range(8):
        hist += _responses_step(i)
    codec = codec_module.Codec("openai-responses")
    codec.read(hist)
    grown = hist + _responses_step(8)
    codec.read(grown)
    assert codec.fresh_from == len(hist) - 1  # the last output of before, then the new items
    fresh = codec_module.Codec("openai-responses")
    fresh.read(grown)
    assert codec.messages == fresh.messages
