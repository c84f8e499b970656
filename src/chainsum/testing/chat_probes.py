"""Chats with questions about what was said in them, and the answers a context must hold: the probes of the recall
benchmark (``bench/bench_recall.py``) and of the recall tests.

Three sources, each a list of `ProbedChat` (OpenAI chat messages, a system prompt first, and `Probe` questions):

- `generated_chats`: ``chainsum.testing.sessions.chat(n, seed=s)`` with its planted facts ("What was the confirmation
  number for Hobart?" -> ``123-4567``); where several facts share a question ("What is my cousin's dog called?") only
  the newest is asked, since it is the answer now.
- `memorybank_chats`: the memorybank companion chats (``chat_facts.memorybank_chats``). Its probing questions carry
  no answers, so the probes are derived from the history: a user sentence stating exactly one fact
  (`chat_facts.stated_facts`: a number, a date, a name after a sentence's first word), asked back with that fact
  blanked and at most six words either side ("Remind me what I said: '... went to the ___ with my ...'"). The
  answer is the fact.
- `bfcl_chats`: BFCL v4 memory (``bfcl-memory``): each scenario's prerequisite conversations, one after another,
  user turns only upstream, so each is followed by the same short assistant reply; the probe questions with their
  accepted answers (any of them counts; each is still matched as a whole word of the context).

A probe whose question holds the answer of any probe of its chat is left out (asked in sequence, an earlier
question would otherwise put a later answer in the history).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .chat_facts import contains, stated_facts
from .chat_facts import memorybank_chats as _memorybank_messages
from .sessions import chat

__all__ = ["BFCL_REPLY", "Probe", "ProbedChat", "bfcl_chats", "generated_chats", "memorybank_chats", "unleaked"]

BFCL_REPLY = "Thanks for telling me; I have noted that."
"""The assistant's reply after each user turn of a BFCL conversation (upstream, the histories are the user's only)."""


@dataclass(frozen=True, slots=True)
class Probe:
    """A question about the chat and the texts that answer it (any one, found as a whole word, in small letters)."""

    question: str
    answers: tuple[str, ...]

    def answered_by(self, text: str) -> bool:
        """Whether `text` (in small letters) holds one of the answers as a whole word (`chat_facts.contains`)."""
        return any(contains(text, a) for a in self.answers)


@dataclass(frozen=True, slots=True)
class ProbedChat:
    label: str
    messages: list[dict[str, Any]]
    probes: list[Probe]


def unleaked(probes: Sequence[Probe]) -> list[Probe]:
    """`probes` without those whose question holds an answer of any of them."""
    answers = [a for p in probes for a in p.answers]
    return [p for p in probes if not any(contains(p.question.lower(), a) for a in answers)]


def generated_chats(n_chats: int, n_messages: int = 400) -> list[ProbedChat]:
    """``chat(n_messages, seed=s)`` for s = 1..`n_chats`, each planted fact's question (the newest fact of a shared
    question only)."""
    out: list[ProbedChat] = []
    for seed in range(1, n_chats + 1):
        session = chat(n_messages, seed=seed)
        newest = {f.question: f for f in session.facts}  # a later fact of the same question replaces the earlier
        probes = unleaked([Probe(f.question, (f.answer,)) for f in newest.values()])
        out.append(ProbedChat(f"chat({n_messages}, seed={seed})", session.messages, probes))
    return out


_SENTENCE = re.compile(r"[^.!?]+[.!?]?")
_TAG = re.compile(r"^\[[^\]]{1,40}\] ")


def _cloze(sentence: str, fact: str, words: int = 6) -> str | None:
    """`sentence` with `fact` blanked and at most `words` words either side; None without enough context."""
    at = sentence.find(fact)
    if at < 0:
        return None
    before = sentence[:at].split()[-words:]
    after = sentence[at + len(fact) :].split()[:words]
    if len(before) + len(after) < 3:
        return None
    return " ".join([*before, "___", *after]).strip()


def memorybank_chats(root: Path | None) -> list[ProbedChat]:
    """The memorybank chats under `root` with probes derived from their user sentences (see the module docstring);
    [] without the corpus."""
    out: list[ProbedChat] = []
    for k, messages in enumerate(_memorybank_messages(root)):
        probes: list[Probe] = []
        asked: set[str] = set()
        for m in messages:
            if m["role"] != "user":
                continue
            for sentence in _SENTENCE.findall(_TAG.sub("", str(m["content"]))):
                facts = stated_facts([{"role": "user", "content": sentence}])
                if len(facts) != 1 or facts[0] in asked:
                    continue
                cloze = _cloze(sentence, facts[0])
                if cloze is None:
                    continue
                asked.add(facts[0])
                probes.append(Probe(f"Remind me what I said: '{cloze}'. What was the missing part?", (facts[0],)))
        out.append(ProbedChat(f"memorybank #{k}", messages, unleaked(probes)))
    return out


_BFCL_SYSTEM = "You are a helpful assistant who remembers what the user tells you."


def bfcl_chats(root: Path | None) -> list[ProbedChat]:
    """The BFCL v4 memory scenarios under `root` (``bfcl-memory``) as chats with their probes; [] without it."""
    base = root / "bfcl-memory" if root else None
    if base is None or not (base / "BFCL_v4_memory.json").is_file():
        return []
    answers = {
        entry["id"]: tuple(str(a) for a in entry["ground_truth"])
        for entry in _lines(base / "possible_answer" / "BFCL_v4_memory.json")
    }
    questions: dict[str, list[Probe]] = {}
    for entry in _lines(base / "BFCL_v4_memory.json"):
        text = " ".join(str(t["content"]) for turn in entry["question"] for t in turn if t.get("role") == "user")
        if entry["id"] in answers:
            questions.setdefault(str(entry["scenario"]), []).append(Probe(text, answers[entry["id"]]))
    out: list[ProbedChat] = []
    for path in sorted((base / "memory_prereq_conversation").glob("memory_*.json")):
        scenario = path.stem.removeprefix("memory_")
        messages: list[dict[str, Any]] = [{"role": "system", "content": _BFCL_SYSTEM}]
        for conversation in _lines(path):
            for turn in conversation["question"]:
                for t in turn:
                    if t.get("role") == "user":
                        messages.append({"role": "user", "content": str(t["content"])})
                        messages.append({"role": "assistant", "content": BFCL_REPLY})
        out.append(ProbedChat(f"bfcl {scenario}", messages, unleaked(questions.get(scenario, []))))
    return out


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
