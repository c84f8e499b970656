"""Recall: once old messages were summarized into the archive, a user message that asks about them again gets the
originals back, verbatim, in one block right before it, inside ``recall_token_ratio`` of the window; and
`RecallTool` gives an agent the same archive as a tool."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import jsonschema
import pytest
from pydantic import TypeAdapter

from chainsum.manager import RecallTool
from chainsum.manager._config import ManagerConfig
from chainsum.manager._manager import ContextManager
from chainsum.manager._recall import RECALL_INTRO, is_recall_message
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
            assert COUNTER.count_message(blocks[0]) <= ratio * WINDOW
        assert COUNTER.count_messages(out) <= WINDOW and not prepared.over_window
        assert validate(out, "openai") == []
    assert recalled > 0 or ratio * WINDOW < 150  # 100 tokens hold no more than the block's frame


def test_a_recall_block_sent_back_is_replaced_not_piled_up() -> None:
    manager, history, _ = _summarized()
    facts = _unique_facts(chat(200).facts)
    sent: list[Any] = list(history)
    for fact in facts[:6]:
        sent = [*sent, {"role": "user", "content": fact.question}]
        prepared = manager.prepare_sync(sent)
        out = canonical(prepared.messages, "openai")
        assert sum(is_recall_message(m) for m in out) <= 1
        sent = [*prepared.messages, {"role": "assistant", "content": "Noted."}]  # the agent keeps what it sent
    assert sum(is_recall_message(m) for m in canonical(sent, "openai")) <= 1


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
