"""Recall on the public chat QA sets (issue 32; ``bench/bench_recall.py`` prints every source, window and way of
asking): a chat fed request by request, then each probe question asked as an edit of the last message; with recall
the answer is in the request sent for at least min(2x truncation's share, 0.75) of the questions, and no request is
over the window. Where the benchmark meets the target (memorybank at 2,000 tokens, BFCL v4 memory at 4,000)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chainsum import formats
from chainsum.manager import ContextManager, ManagerConfig
from chainsum.store import MemoryArchive
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing import corpora_root
from chainsum.testing.baselines import truncate
from chainsum.testing.chat_probes import ProbedChat, bfcl_chats, memorybank_chats
from chainsum.tokens import HeuristicCounter

COUNTER = HeuristicCounter()


def _text(items: Any) -> str:
    return json.dumps(list(items), ensure_ascii=False, default=str).lower()


def _asked(chat: ProbedChat, window: int) -> tuple[int, int, int]:
    """(answered with recall, answered by truncation, requests over the window) over the chat's probes."""
    manager = ContextManager(
        ManagerConfig(), context_window=window, summarizers=[ExtractiveSummarizer()], archive=MemoryArchive()
    )
    history: list[dict[str, Any]] = []
    over = 0
    for message in chat.messages:
        history.append(message)
        if message["role"] == "user":
            sent = manager.prepare_sync(list(history)).messages
            over += COUNTER.count_messages(formats.load(list(sent)).messages) > window
    ours = theirs = 0
    for probe in chat.probes:
        asked = [*history, {"role": "user", "content": probe.question}]
        sent = list(manager.prepare_sync(asked).messages)
        over += COUNTER.count_messages(formats.load(sent).messages) > window
        ours += probe.answered_by(_text(sent))
        kept = truncate(formats.load(asked).messages, window, COUNTER)
        theirs += probe.answered_by(_text([m.text for m in kept]))
    return ours, theirs, over


@pytest.mark.slow
@pytest.mark.corpus
@pytest.mark.parametrize(("source", "window"), [("memorybank", 2000), ("bfcl", 4000)])
def test_edited_questions_find_their_answers_in_the_request(source: str, window: int) -> None:
    root = corpora_root()
    chats = memorybank_chats(root) if source == "memorybank" else bfcl_chats(root)
    if not chats:
        pytest.skip(f"the {source} corpus is not beside the checkout")
    questions = sum(len(c.probes) for c in chats)
    ours = theirs = over = 0
    for chat in chats:
        a, b, c = _asked(chat, window)
        ours, theirs, over = ours + a, theirs + b, over + c
    assert over == 0
    assert ours / questions >= min(2 * theirs / questions, 0.75), (ours, theirs, questions)
