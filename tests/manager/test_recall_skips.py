"""What recall leaves out on a request with no new question (issue 23): the archive is searched only for a user
message that is the request's newest (or at a compaction), never for an agent's tool steps after it nor for the
same request sent again, and the pinned blocks are checked once per request; the blocks sent stay exactly the ones
of the request that made them."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from chainsum.chain import is_record_message
from chainsum.manager import ContextManager, ManagerConfig
from chainsum.manager._pins import RecallPins, newest_user
from chainsum.manager._recall import RECALL_INTRO, PinnedRecall, Recall
from chainsum.messages import Message
from chainsum.store import MemoryArchive, SearchHit
from chainsum.testing.sessions import chat
from chainsum.tokens import HeuristicCounter
from manager.manager_support import Dict
from manager.wire_support import canonical

COUNTER = HeuristicCounter()
WINDOW = 2000


class CountingArchive(MemoryArchive):
    """A memory archive that counts its searches."""

    def __init__(self) -> None:
        super().__init__()
        self.searches = 0

    def search(
        self, session: str | None, query: str, limit: int = 20, *, any_word: bool = False, snippets: bool = True
    ) -> list[SearchHit]:
        self.searches += 1
        return super().search(session, query, limit, any_word=any_word, snippets=snippets)


def _steps(start: int, n: int) -> list[Dict]:
    out: list[Dict] = []
    for k in range(start, start + n):
        call = {"id": f"call_{k}", "type": "function", "function": {"name": "read", "arguments": f'{{"page": {k}}}'}}
        out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        out.append({"role": "tool", "tool_call_id": f"call_{k}", "content": f"page {k}: " + "text " * 8})
    return out


def _question_asked() -> tuple[ContextManager, CountingArchive, list[Dict], Any]:
    """A chat compacted into the archive, then a question about a summarized fact that gets a recall block."""
    session = chat(200)
    archive = CountingArchive()
    manager = ContextManager(
        ManagerConfig(recall_token_ratio=0.3, cooldown_messages=100),
        context_window=WINDOW,
        archive=archive,
        counter=COUNTER,
    )
    assert manager.prepare_sync(session.messages).changed
    history = list(session.messages)
    fact = next(f for f in session.facts if f.index < len(history) - 40)
    sent = [*history, {"role": "user", "content": fact.question}]
    searches = archive.searches
    first = manager.prepare_sync(sent)
    assert first.recalled and not first.changed
    assert archive.searches == searches + 1  # a new question: one search
    return manager, archive, sent, first


def _blocks(messages: Any) -> list[Any]:
    return [m for m in messages if RECALL_INTRO in str(m.get("content"))]


def test_tool_steps_after_the_question_search_nothing_and_keep_the_block() -> None:
    manager, archive, sent, first = _question_asked()
    searches = archive.searches
    version = archive.get_state("default").version
    for k in range(6):
        sent = [*sent, *_steps(k, 1)]
        prepared = manager.prepare_sync(sent)
        assert not prepared.rewritten
        assert archive.searches == searches  # no new user message: no search
        assert archive.get_state("default").version == version  # nor a state write
        assert _blocks(prepared.messages) == _blocks(first.messages)
        assert prepared.recalled == first.recalled and prepared.recall_tokens == first.recall_tokens
        assert list(prepared.messages[: len(first.messages)]) == list(first.messages)


def test_the_same_request_again_searches_nothing() -> None:
    manager, archive, sent, first = _question_asked()
    searches = archive.searches
    again = manager.prepare_sync(list(sent))
    assert archive.searches == searches
    assert list(again.messages) == list(first.messages) and again.recalled == first.recalled


def test_the_pins_are_checked_once_per_request(monkeypatch: pytest.MonkeyPatch) -> None:
    manager, _, sent, first = _question_asked()
    checks: list[int] = []
    standing = RecallPins.standing

    def counted(self: RecallPins, pins: Any, output: Any) -> list[PinnedRecall]:
        checks.append(len(output))
        return standing(self, pins, output)

    monkeypatch.setattr(RecallPins, "standing", counted)
    for k in range(3):
        sent = [*sent, *_steps(k, 1)]
        prepared = manager.prepare_sync(sent)
        assert _blocks(prepared.messages) == _blocks(first.messages)
    assert len(checks) == 3


def test_an_edit_before_the_block_still_drops_it() -> None:
    """The check kept for a request is dropped when the history is read again: a caller that edits a message before
    the block's place, then goes on with a tool step (nothing to search for), sends no block."""
    manager, archive, sent, first = _question_asked()
    edited = [*sent[:-2], {**sent[-2], "content": str(sent[-2]["content"]) + " (edited)"}, sent[-1], *_steps(0, 1)]
    searches = archive.searches
    prepared = manager.prepare_sync(edited)
    assert archive.searches == searches
    assert not _blocks(prepared.messages) and prepared.recalled == () and prepared.recall_tokens == 0
    assert first.recalled


def _old_place(output: list[Message], pins: list[PinnedRecall], *, compacted: bool) -> int | None:
    """`RecallPins.place` before it looked only at the newest message without a compaction (the reference)."""
    at = newest_user(output)
    if at is None or any(p.at == at for p in pins):
        return None
    if at == len(output) - 1:
        return at
    if not compacted:
        return None
    answered = any(m.role == "assistant" and not m.tool_calls for m in output[at + 1 :])
    return None if answered else at


@pytest.mark.parametrize("seed", range(20))
def test_place_finds_what_the_whole_scan_found(seed: int) -> None:
    rng = random.Random(seed)
    compacted = ContextManager(ManagerConfig(), context_window=WINDOW, archive=MemoryArchive(), counter=COUNTER)
    compacted.prepare_sync(chat(200).messages)
    record = next(m for m in compacted.context() if is_record_message(m))
    kinds: list[Message] = [
        Message.of("user", "what about f_3 in src/a.py?"),
        Message.of("user", "   "),
        record,
        Message.of("assistant", "Done."),
        Message.of("system", "Be brief."),
        *canonical(_steps(0, 1), "openai"),
    ]
    block = Recall(Message.of("user", RECALL_INTRO), ("x",), 10)
    for _ in range(200):
        output = [rng.choice(kinds) for _ in range(rng.randint(0, 8))]
        pins = [PinnedRecall(i, "", block) for i in range(len(output)) if rng.random() < 0.2]
        for compacted in (False, True):
            assert RecallPins.place(output, pins, compacted=compacted) == _old_place(
                output, pins, compacted=compacted
            ), (output, pins, compacted)


def test_no_recall_config_searches_nothing() -> None:
    session = chat(200)
    archive = CountingArchive()
    manager = ContextManager(
        replace(ManagerConfig(), recall_token_ratio=0.0), context_window=WINDOW, archive=archive, counter=COUNTER
    )
    manager.prepare_sync(session.messages)
    manager.prepare_sync([*session.messages, {"role": "user", "content": "and the birthday?"}])
    assert archive.searches == 0
