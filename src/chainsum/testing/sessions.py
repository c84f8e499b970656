"""Deterministic long conversations for tests and benchmarks: an agent session and a plain chat, both with planted
facts whose later recall can be checked.

`agent_session(n)` is a coding agent's log in OpenAI chat dicts: a user task, then steps of one or more parallel
tool calls whose results run from 0.1 to 60 KB (file reads, searches, test runs), now and then a new user request,
and identifiers planted in the tool output and the assistant's text (ticket ids, file paths, error codes, versions)
that a summary should keep. `chat(n)` is a two-person chat with no tools: days of small talk in which the user
mentions facts (a name, a date, a number, a place) and later asks about them; `questions` lists each fact with the
question that asks for it and the answer text to find in a prepared context.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

__all__ = ["ChatSession", "PlantedFact", "agent_session", "chat"]

_WORDS = (
    "the of and to in is for that on with as it by this be are from at or an was have not which more can will about "
    "when there their what all has would if so up out do into time only other some could them see then now look use "
    "way new most these two may first well any work part over take place made live where after back little long "
    "thing year same even great old end why right went mean each small world still every put turn move while open"
).split()
_TOPICS = ("books", "films", "recipes", "travel", "music", "gardening", "chess", "astronomy", "running", "birds")
_NAMES = ("Marguerite", "Oskar", "Ines", "Tobias", "Yuki", "Ravi", "Helena", "Dmitri", "Amara", "Lucien")
_PLACES = ("Lisbon", "Kyoto", "Tromso", "Valparaiso", "Zanzibar", "Ljubljana", "Hobart", "Cusco", "Tbilisi", "Oaxaca")
_THINGS = ("violin", "kayak", "telescope", "sourdough starter", "bonsai", "typewriter", "sextant", "harmonium")


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


@dataclass(frozen=True, slots=True)
class PlantedFact:
    """A fact stated at message `index` and the question that asks for it later."""

    index: int
    question: str
    answer: str
    """Text that a context answering the question must contain (compared case-insensitively)."""


@dataclass(frozen=True, slots=True)
class ChatSession:
    messages: list[dict[str, Any]]
    facts: list[PlantedFact]


def chat(n_messages: int, *, seed: int = 7, words: tuple[int, int] = (8, 40)) -> ChatSession:
    """A system prompt and `n_messages` alternating user and assistant messages; about one user message in six
    states a fact (the questions about them are in `facts`, not in the chat)."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a warm, attentive companion."}]
    facts: list[PlantedFact] = []
    day = 0
    for i in range(n_messages // 2):
        if i % 12 == 0:
            day += 1
        topic = rng.choice(_TOPICS)
        text = f"Day {day}: about {topic}. " + _words(rng, rng.randint(*words))
        if rng.random() < 1 / 6:
            kind = rng.randrange(4)
            if kind == 0:
                name = f"{rng.choice(_NAMES)} {rng.choice(_NAMES)}son"
                text += f" My cousin's new dog is called {name}."
                facts.append(PlantedFact(len(messages), "What is my cousin's dog called?", name))
            elif kind == 1:
                place = rng.choice(_PLACES)
                code = f"{rng.randint(100, 999)}-{rng.randint(1000, 9999)}"
                text += f" I booked the trip to {place}, confirmation number {code}."
                facts.append(PlantedFact(len(messages), f"What was the confirmation number for {place}?", code))
            elif kind == 2:
                thing = rng.choice(_THINGS)
                price = f"{rng.randint(20, 900)} euros"
                text += f" I finally bought the {thing} for {price}."
                facts.append(PlantedFact(len(messages), f"How much did I pay for the {thing}?", price))
            else:
                month = rng.choice(("March", "June", "September", "November"))
                date = f"{month} {rng.randint(2, 28)}"
                who = rng.choice(_NAMES)
                text += f" {who}'s birthday is on {date}, remind me."
                facts.append(PlantedFact(len(messages), f"When is {who}'s birthday?", date))
        messages.append({"role": "user", "content": text})
        messages.append({"role": "assistant", "content": f"That sounds lovely. {_words(rng, rng.randint(*words))}"})
    return ChatSession(messages, facts)


def _line_pool(rng: random.Random) -> dict[str, list[str]]:
    """Lines of each kind of tool output, drawn once (drawing every line afresh makes a 13 MB session slow to build)."""
    return {
        "read": [f"    {rng.choice(('def', 'return', 'if', 'for'))} {_words(rng, 6)}" for _ in range(400)],
        "search": [
            f"src/pkg_{rng.randint(0, 40)}/mod_{rng.randint(0, 90)}.py:{rng.randint(1, 900)}: {_words(rng, 5)}"
            for _ in range(400)
        ],
        "run": [
            f"tests/test_{rng.randint(0, 60)}.py::{_words(rng, 1)}_{rng.randint(0, 99)} PASSED" for _ in range(400)
        ],
    }


def _tool_output(rng: random.Random, pool: list[str], size: int, planted: str) -> str:
    lines: list[str] = []
    total = 0
    start = rng.randrange(len(pool))
    while total < size:
        line = pool[(start + len(lines) * 7) % len(pool)]
        lines.append(line)
        total += len(line) + 1
    lines.insert(rng.randrange(len(lines) + 1), planted)
    return "\n".join(lines)


def agent_session(n_messages: int, *, seed: int = 11) -> list[dict[str, Any]]:
    """A coding agent's log of about `n_messages` OpenAI chat messages (see the module docstring)."""
    rng = random.Random(seed)
    pools = _line_pool(rng)
    out: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent in the repository /srv/app. Use the tools."},
        {"role": "user", "content": "The nightly build fails on ticket APP-1000. Find the cause and fix it."},
    ]
    step = 0
    while len(out) < n_messages:
        step += 1
        if step % 150 == 0:
            out.append({"role": "user", "content": f"Also look at ticket APP-{1000 + step}: {_words(rng, 12)}"})
        n_calls = 1 if rng.random() < 0.8 else rng.randint(2, 4)
        calls: list[tuple[str, str, str]] = []  # (id, tool name, arguments)
        for k in range(n_calls):
            kind = rng.choice(("read", "search", "run"))
            args = (
                f'{{"path": "src/pkg_{rng.randint(0, 40)}/mod_{rng.randint(0, 90)}.py"}}'
                if kind == "read"
                else f'{{"query": "{rng.choice(_WORDS)}_{rng.randint(0, 99)}"}}'
                if kind == "search"
                else '{"command": "pytest -q"}'
            )
            calls.append((f"call_{step}_{k}", kind, args))
        text = f"Step {step}: checking {_words(rng, 6)}." if rng.random() < 0.5 else None
        wire_calls = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls]
        out.append({"role": "assistant", "content": text, "tool_calls": wire_calls})
        for call_id, kind, _ in calls:
            size = int(100 * (600 ** (rng.random() ** 2)))  # 0.1 to 60 KB, most of them small
            planted = f"ERR-{step:05d} in build v1.{step % 40}.{step % 7}: see src/core/unit_{step}.py"
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "content": _tool_output(rng, pools[kind], size, planted),
                }
            )
        if rng.random() < 0.15:
            out.append({"role": "assistant", "content": f"Found: unit_{step} raises ERR-{step:05d}. {_words(rng, 10)}"})
    return out
