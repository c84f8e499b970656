"""Chat facts kept without recall, next to plain truncation at the same window: what ``bench/bench_summaries.py``
(part b) prints and the memorybank corpus test asserts, in one place so both make the same claim.

A chat's facts are what its users state (`stated_facts`): numbers, dates, and capitalized names after a sentence's
first word, found by this module's own pattern, not by the summarizer's. A chat is fed to a `ContextManager` with
recall off one request at a time (the caller keeps the full history), then a last question
(`prepared_without_recall`); a fact is kept when it is in the prepared context, as a word (`contains`). The
baseline keeps the system prompt and the newest messages that fit (`truncated`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .. import formats
from ..manager import ContextManager, ManagerConfig
from ..store import MemoryArchive
from ..summarize import ExtractiveSummarizer
from ..tokens import TokenCounter

__all__ = ["contains", "memorybank_chats", "prepared_without_recall", "stated_facts", "truncated"]

_STATED = re.compile(
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December) "
    r"\d{1,2}(?:st|nd|rd|th)?\b"
    r"|\b\d[\d,.:/-]*\d\b|\b\d\b"
    r"|(?<=[a-z,] )[A-Z][a-z]+(?: [A-Z][a-z]+)*"
)
_COMMON = frozenset("I I'm I've I'll I'd AI OK Okay Yes No Hi Hello Thanks Thank".split())
_TAG = re.compile(r"^\[[^\]]{1,40}\] ")
"""The session's date a memorybank chat's first message of a day opens with: the client's, not a stated fact."""


def stated_facts(messages: Iterable[dict[str, Any]]) -> list[str]:
    """What users state in `messages` (numbers, dates, names after a sentence's first word), each once, in order."""
    found: dict[str, None] = {}
    for m in messages:
        if m.get("role") != "user":
            continue
        for match in _STATED.finditer(_TAG.sub("", str(m.get("content", "")))):
            fact = match.group()
            if fact not in _COMMON and len(fact) > 1:
                found[fact] = None
    return list(found)


def contains(text: str, answer: str) -> bool:
    """Whether `answer` is in `text` (in small letters) as a word: not inside a longer one."""
    return re.search(rf"(?<!\w){re.escape(answer.lower())}(?!\w)", text) is not None


def truncated(history: list[dict[str, Any]], window: int, counter: TokenCounter) -> list[dict[str, Any]]:
    """Plain truncation: the system prompt (the first message) and the newest messages that fit `window`."""
    canonical = formats.load(history).messages
    total = counter.count_messages([canonical[0]])
    keep = len(history)
    while keep > 1 and total + counter.count_message(canonical[keep - 1]) <= window:
        keep -= 1
        total += counter.count_message(canonical[keep])
    return [history[0], *history[keep:]]


def prepared_without_recall(
    messages: Sequence[dict[str, Any]], window: int, question: str, config: ManagerConfig | None = None
) -> list[Any]:
    """What a `ContextManager` (recall off, the extractive summarizer) hands the model for `question` after
    `messages` were fed one request per user message."""
    manager = ContextManager(
        config or ManagerConfig(recall_token_ratio=0),
        context_window=window,
        summarizers=[ExtractiveSummarizer()],
        archive=MemoryArchive(),
    )
    history: list[dict[str, Any]] = []
    for message in messages:
        history.append(message)
        if message.get("role") == "user":
            manager.prepare_sync(history)
    history.append({"role": "user", "content": question})
    return list(manager.prepare_sync(history).messages)


_COMPANION = "You are an AI companion who remembers the user."


def memorybank_chats(root: Path | None, system: str = _COMPANION) -> list[list[dict[str, Any]]]:
    """The memorybank chats under `root` (``memorybank/memory_bank_en.json``), as OpenAI chat messages with the
    `system` prompt, each day's first user message opened with its date (``[2023-04-27] ...``); [] without it."""
    path = root / "memorybank" / "memory_bank_en.json" if root else None
    if path is None or not path.is_file():
        return []
    chats: list[list[dict[str, Any]]] = []
    for entry in json.loads(path.read_text(encoding="utf-8")).values():
        out: list[dict[str, Any]] = [{"role": "system", "content": system}]
        for date, exchanges in entry["history"].items():
            for k, exchange in enumerate(exchanges):
                query = f"[{date}] {exchange['query']}" if k == 0 else exchange["query"]
                out.append({"role": "user", "content": query})
                out.append({"role": "assistant", "content": exchange["response"]})
        chats.append(out)
    return chats
