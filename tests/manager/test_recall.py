"""Recall: once old messages were summarized into the archive, a user message that asks about them again gets the
originals back, verbatim, in one block right before it, inside ``recall_token_ratio`` of the window; and
`RecallTool` gives an agent the same archive as a tool."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from typing import Any

import jsonschema
import pytest
from pydantic import TypeAdapter

from chainsum.manager import ContextManager, ManagerConfig, RecallTool
from chainsum.manager._recall import RECALL_INTRO, SMALLEST_ROOM, is_recall_message, recall_block
from chainsum.messages import Message
from chainsum.rules import validate
from chainsum.store import MemoryArchive, SQLiteStore
from chainsum.testing.sessions import PlantedFact, chat
from chainsum.tokens import HeuristicCounter
from manager.manager_support import Dict
from manager.wire_support import canonical, to_wire

COUNTER = HeuristicCounter()
WINDOW = 2000


def _unique_facts(facts: list[PlantedFact]) -> list[PlantedFact]:
    """Facts whose question is asked about one fact only ("What is my cousin's dog called?" has several answers)."""
    asked = Counter(f.question for f in facts)
    return [f for f in facts if asked[f.question] == 1]


def _summarized(ratio: float = 0.1, archive: Any = None) -> tuple[ContextManager, list[Dict], Any]:
    session = chat(200)
    archive = archive if archive is not None else MemoryArchive()
    manager = ContextManager(
        ManagerConfig(recall_token_ratio=ratio), context_window=WINDOW, archive=archive, counter=COUNTER
    )
    prepared = manager.prepare_sync(session.messages)
    assert prepared.changed and manager.state.archived > 100
    return manager, session.messages, archive


def _ask(manager: ContextManager, history: list[Dict], question: str) -> tuple[list[Message], Any]:
    prepared = manager.prepare_sync([*history, {"role": "user", "content": question}])
    return canonical(prepared.messages, "openai"), prepared


def test_a_question_about_a_summarized_fact_gets_the_original_back() -> None:
    manager, history, archive = _summarized()
    facts = [f for f in _unique_facts(chat(200).facts) if f.index < len(history) - 40]
    assert len(facts) >= 8
    for fact in facts:
        out, prepared = _ask(manager, history, fact.question)
        blocks = [m for m in out if is_recall_message(m)]
        assert len(blocks) == 1, fact
        block = blocks[0]
        assert block.role == "user" and block.text.startswith(RECALL_INTRO)
        assert fact.answer.lower() in block.text.lower(), (fact, block.text[:500])
        assert out.index(block) == len(out) - 2 and out[-1].text == fact.question  # right before the question
        # the recalled ids are archive ids, and the original holding the answer is one of them
        assert prepared.recalled
        originals = archive.originals("default", list(prepared.recalled))
        assert set(originals) == set(prepared.recalled)
        assert any(fact.answer in m.text for m in originals.values())
        assert history[fact.index]["content"] in [m.text for m in originals.values()]
        # inside its share of the window, and the request stays valid and under the window
        assert COUNTER.count_message(block) <= 0.1 * WINDOW
        assert validate(out, "openai") == []
        assert COUNTER.count_messages(out) <= WINDOW and prepared.tokens_after <= WINDOW


def test_ratio_zero_means_no_recall_block() -> None:
    manager, history, _ = _summarized(ratio=0.0)
    for fact in _unique_facts(chat(200).facts):
        out, prepared = _ask(manager, history, fact.question)
        assert not [m for m in out if is_recall_message(m) or RECALL_INTRO in m.text]
        assert prepared.recalled == ()


@pytest.mark.parametrize("ratio", [0.05, 0.1, 0.2, 0.5])
def test_the_block_stays_inside_its_share_of_the_window(ratio: float) -> None:
    manager, history, _ = _summarized(ratio=ratio)
    recalled = 0
    for fact in chat(200).facts:
        out, prepared = _ask(manager, history, fact.question + " Also the confirmation numbers and the birthdays?")
        blocks = [m for m in out if is_recall_message(m)]
        assert len(blocks) <= 1
        if blocks:
            recalled += 1
            assert COUNTER.count_message(blocks[0]) <= max(ratio * WINDOW, SMALLEST_ROOM)
        assert COUNTER.count_messages(out) <= WINDOW and not prepared.over_window
        assert validate(out, "openai") == []
    assert recalled > 0 or ratio * WINDOW < 150  # 100 tokens hold no more than the block's frame


def test_a_recall_block_sent_back_stays_where_it_was_never_twice() -> None:
    """An agent that keeps what it sent sends the blocks back: each one stays where it was, once, and every request
    is the previous one plus the new messages until the next compaction. (Before blocks were pinned, each question
    replaced the block of the one before, so the request changed where the old block had been.)"""
    manager, history, _ = _summarized()
    facts = _unique_facts(chat(200).facts)
    sent: list[Any] = list(history)
    previous: list[Any] = []
    for fact in facts[:6]:
        sent = [*sent, {"role": "user", "content": fact.question}]
        prepared = manager.prepare_sync(sent)
        out = canonical(prepared.messages, "openai")
        blocks = [m for m in out if is_recall_message(m)]
        assert len({m.text for m in blocks}) == len(blocks)  # never the same block twice
        assert all(COUNTER.count_message(m) <= 0.1 * WINDOW for m in blocks)  # each block in its own room
        assert COUNTER.count_messages(out) <= WINDOW
        if not prepared.rewritten:
            assert list(prepared.messages[: len(previous)]) == previous
        previous = list(prepared.messages)
        sent = [*prepared.messages, {"role": "assistant", "content": "Noted."}]  # the agent keeps what it sent


def _steps(start: int, n: int, words: int = 60) -> list[Dict]:
    """`n` tool steps of an agent answering a question, each with an output of about `words` words."""
    out: list[Dict] = []
    for k in range(start, start + n):
        call = {"id": f"call_{k}", "type": "function", "function": {"name": "read", "arguments": f'{{"page": {k}}}'}}
        out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        out.append({"role": "tool", "tool_call_id": f"call_{k}", "content": f"page {k}: " + "text " * words})
    return out


def test_a_recall_block_stays_in_place_while_the_turn_grows() -> None:
    """The block made for a question is sent, byte for byte and in the same place, with every tool step that
    answers it, until a compaction folds it in: it used to be dropped as soon as the growing turn left it less room
    than it took, one request before the compaction (at the proxy, with a large system prompt and tool
    definitions, for many requests), and every token after it was sent again uncached."""
    manager, history, _ = _summarized(ratio=0.3)  # a large block, as at the proxy's 60K window (6,000 tokens)
    manager.config = replace(manager.config, cooldown_messages=10)  # the turn grows past the trigger meanwhile
    fact = next(f for f in _unique_facts(chat(200).facts) if f.index < len(history) - 40)
    sent = [*history, {"role": "user", "content": fact.question}]
    first = manager.prepare_sync(sent)
    assert first.recalled
    at = next(i for i, m in enumerate(first.messages) if RECALL_INTRO in str(m.get("content")))
    previous = list(first.messages)
    grown = 0
    for k in range(12):
        sent = [*sent, *_steps(k, 1)]
        prepared = manager.prepare_sync(sent)
        if prepared.rewritten:
            assert prepared.changed and prepared.tokens_after <= WINDOW
            break
        assert list(prepared.messages[: len(previous)]) == previous
        assert prepared.messages[at] == first.messages[at] and prepared.recalled == first.recalled
        assert prepared.recall_tokens == first.recall_tokens and prepared.tokens_after <= WINDOW
        previous = list(prepared.messages)
        grown += 1
    assert grown >= 2


def test_a_new_question_leaves_the_earlier_block_where_it_was() -> None:
    """A second question between two compactions gets a block of its own, in a room of its own (it used to get only
    what the first block left of one shared room), and the first block stays before the first question."""
    manager, history, _ = _summarized(ratio=0.3)
    first_fact, second_fact = [f for f in _unique_facts(chat(200).facts) if f.index < len(history) - 40][:2]
    sent = [*history, {"role": "user", "content": first_fact.question}]
    first = manager.prepare_sync(sent)
    assert first.recalled and not first.changed
    at = next(i for i, m in enumerate(first.messages) if RECALL_INTRO in str(m.get("content")))
    sent = [*sent, {"role": "assistant", "content": "Noted."}, {"role": "user", "content": second_fact.question}]
    second = manager.prepare_sync(sent)
    assert not second.rewritten
    assert list(second.messages[: len(first.messages)]) == list(first.messages)
    assert second.messages[at] == first.messages[at]
    assert second.recalled[: len(first.recalled)] == first.recalled
    assert second.recall_tokens > first.recall_tokens  # the new block goes right before the new question
    assert RECALL_INTRO in str(second.messages[-2]["content"])
    assert second_fact.answer in str(second.messages[-2]["content"])
    assert COUNTER.count_message(canonical([second.messages[-2]], "openai")[0]) <= 0.3 * WINDOW


def test_another_process_sends_the_same_blocks() -> None:
    """The blocks are kept in the session state: a manager of another process (a fresh one on the same store)
    carries them the same way."""
    manager, history, archive = _summarized()
    fact = next(f for f in _unique_facts(chat(200).facts) if f.index < len(history) - 40)
    sent = [*history, {"role": "user", "content": fact.question}]
    first = manager.prepare_sync(sent)
    assert first.recalled
    other = ContextManager(ManagerConfig(), context_window=WINDOW, archive=archive, counter=COUNTER)
    sent = [*sent, *_steps(0, 1, words=5)]
    again = other.prepare_sync(sent)
    assert not again.rewritten and list(again.messages[: len(first.messages)]) == list(first.messages)


def test_a_block_survives_a_client_moving_its_cache_marker() -> None:
    """Claude Code marks its newest message with Anthropic's ``cache_control`` and moves the marker on the next
    request: the block made before that message holds (what the model reads before it is the same)."""
    session = chat(200)
    items, _ = to_wire(session.messages, "anthropic")
    system = session.messages[0]["content"]
    manager = ContextManager(
        ManagerConfig(), context_window=WINDOW, archive=MemoryArchive(), format="anthropic", provider="anthropic"
    )
    manager.prepare_sync(items, system=system)
    fact = next(f for f in _unique_facts(session.facts) if f.index < len(session.messages) - 40)
    marker = {"type": "ephemeral"}
    question = {"role": "user", "content": [{"type": "text", "text": fact.question, "cache_control": marker}]}
    first = manager.prepare_sync([*items, question], system=system)
    assert first.recalled
    moved = {"role": "user", "content": [{"type": "text", "text": fact.question}]}
    answer = {"role": "assistant", "content": [{"type": "text", "text": "Let me see.", "cache_control": marker}]}
    follow = {"role": "user", "content": [{"type": "text", "text": "Go on."}]}
    second = manager.prepare_sync([*items, moved, answer, follow], system=system)
    assert not second.rewritten and second.recalled[: len(first.recalled)] == first.recalled
    blocks = [m for m in second.messages if RECALL_INTRO in json.dumps(m)]
    assert blocks and blocks[0] in first.messages


def test_recall_in_the_anthropic_format_stays_valid() -> None:
    session = chat(200)
    items, _ = to_wire(session.messages, "anthropic")
    system = session.messages[0]["content"]
    manager = ContextManager(
        ManagerConfig(), context_window=WINDOW, archive=MemoryArchive(), format="anthropic", provider="anthropic"
    )
    manager.prepare_sync(items, system=system)
    fact = _unique_facts(session.facts)[0]
    prepared = manager.prepare_sync([*items, {"role": "user", "content": fact.question}], system=system)
    out = canonical(prepared.messages, "anthropic")
    assert prepared.recalled and fact.answer in "\n".join(m.text for m in out if is_recall_message(m))
    assert validate(out, "anthropic") == []


# the tool ----------------------------------------------------------------------------------------------------------
def test_recall_tool_definitions_are_valid_tool_schemas() -> None:
    from openai.types.chat import ChatCompletionToolParam

    tool = RecallTool(MemoryArchive(), "default")
    openai_def = tool.openai_definition()
    anthropic_def = tool.anthropic_definition()
    TypeAdapter(ChatCompletionToolParam).validate_python(openai_def)
    # Anthropic's ToolParam (checked by hand: importing the anthropic SDK takes seconds)
    assert set(anthropic_def) == {"name", "description", "input_schema"}
    assert anthropic_def["input_schema"]["type"] == "object"
    assert isinstance(anthropic_def["name"], str) and 1 <= len(anthropic_def["name"]) <= 64
    for schema in (openai_def["function"]["parameters"], anthropic_def["input_schema"]):
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema)
        for instance, valid in (
            ({"query": "Hobart"}, True),
            ({"query": "Hobart", "limit": 3}, True),
            ({}, False),
            ({"query": "x", "other": 1}, False),
            ({"query": "x", "limit": 0}, False),
        ):
            errors = list(validator.iter_errors(instance))  # pyright: ignore[reportUnknownMemberType]
            assert (errors == []) is valid, (instance, errors)
    assert openai_def["function"]["name"] == anthropic_def["name"] == "recall"
    json.dumps(openai_def)
    json.dumps(anthropic_def)


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_recall_tool_returns_the_archived_originals(store: str) -> None:
    archive: Any = MemoryArchive() if store == "memory" else SQLiteStore()
    try:
        manager, history, _ = _summarized(archive=archive)
        del manager
        tool = RecallTool(archive, "default")
        found = 0
        for fact in _unique_facts(chat(200).facts):
            if fact.index >= len(history) - 40:
                continue
            keyword = fact.question.rstrip("?").split()[-1]  # the place, the thing or the name asked about
            answer = tool.handle(json.dumps({"query": keyword}))
            assert history[fact.index]["content"] in answer, (keyword, answer[:300])
            found += 1
        assert found >= 8
        assert tool.handle({"query": "Hobart", "limit": 1}).count("[user, message") == 1
        assert tool.handle('{"query": "xyzzy-plugh"}').startswith("no archived message matches")
        assert tool.handle("not json").startswith("error:")
        assert tool.handle("[]").startswith("error:")
        assert tool.handle('{"query": "  "}').startswith("error:")
        assert RecallTool(archive, "another-session").handle('{"query": "Hobart"}').startswith("no archived")
    finally:
        if isinstance(archive, SQLiteStore):
            archive.close()


def test_weak_matches_take_at_most_half_the_room() -> None:
    """A block fills its room with originals about as relevant as the best match; the others (here: sharing only
    "dog" with the question) only while half of the room stays free, for the next question's block."""
    archive = MemoryArchive()
    fact = Message.of("user", "My cousin's new puppy is called Rexford, a beagle from the shelter.")
    weak = [
        Message.of("user", f"The dog next door barked again on night {i}. " + "quiet street " * 12) for i in range(30)
    ]
    archive.archive_and_record("s", [(f"m{i}", m) for i, m in enumerate([fact, *weak])], None)
    budget = 1200
    recall = recall_block(archive, "s", "What is my cousin's puppy called, the dog?", budget, COUNTER)
    assert recall is not None and "m0" in recall.ids  # the best match, whole
    assert "Rexford" in recall.message.text
    assert len(recall.ids) > 1  # weak matches still come where there is room for them
    assert recall.tokens <= budget // 2 + 40  # but only in the first half of it
