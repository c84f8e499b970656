"""Shared helpers of the manager tests: chat turns as OpenAI dicts, a recording sleep, a manager factory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from chainsum.manager import AnySummarizer, ContextManager, ManagerConfig, ManagerEvent
from chainsum.store import MemoryArchive
from chainsum.tokens import HeuristicCounter, TokenCounter

Dict = dict[str, Any]


def turn(i: int, words: int = 30) -> list[Dict]:
    """One user question and one assistant answer, each naming identifiers that a summary should keep."""
    ask = f"Question {i}: please look at src/mod_{i}.py and explain function f_{i}. " + "detail " * words
    answer = f"Answer {i}: f_{i} in src/mod_{i}.py computes value {i}. " + "because " * words
    return [{"role": "user", "content": ask}, {"role": "assistant", "content": answer}]


def tool_turn(i: int, words: int = 30) -> list[Dict]:
    """A user request, an assistant tool call, its result, and the answer."""
    call_id = f"call_{i}"
    return [
        {"role": "user", "content": f"Run check {i} on src/mod_{i}.py"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": "run", "arguments": f'{{"n": {i}}}'}}
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": f"result {i}: " + "line " * words},
        {"role": "assistant", "content": f"Check {i} passed for src/mod_{i}.py."},
    ]


SYSTEM: Dict = {"role": "system", "content": "You are a careful coding assistant."}


class Sleeps:
    """An injectable sleep that records its delays and returns at once (no test waits)."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def make(
    *,
    window: int = 4000,
    summarizers: Sequence[AnySummarizer] | None = None,
    archive: MemoryArchive | None = None,
    events: list[ManagerEvent] | None = None,
    sleeps: Sleeps | None = None,
    counter: TokenCounter | None = None,
    **config: Any,
) -> ContextManager:
    cfg = replace(ManagerConfig(), **config)
    return ContextManager(
        cfg,
        context_window=window,
        counter=counter,
        summarizers=summarizers,
        archive=archive if archive is not None else MemoryArchive(),
        on_event=None if events is None else events.append,
        sleep=sleeps if sleeps is not None else Sleeps(),
    )


def replay(manager: ContextManager, turns: int, *, start: int = 0, history: list[Dict] | None = None) -> list[Dict]:
    """Feed `turns` turns one by one, always sending back what the manager returned."""
    hist = list(history) if history is not None else [SYSTEM]
    for i in range(start, start + turns):
        hist = [*hist, *turn(i)]
        hist = list(manager.prepare_sync(hist).messages)
    return hist


class ReadingModel:
    """Stands for a model summarizer: a line of the transcript's last lines, and what it read counted (tokens per
    call), for the tests of what a model reads per compaction."""

    def __init__(self) -> None:
        self.read: list[int] = []

    def __call__(self, transcript: str) -> str:
        self.read.append(HeuristicCounter().count_text(transcript))
        return "Model summary: " + " ".join(line[:40] for line in transcript.splitlines()[-12:] if line[:1] != "<")
