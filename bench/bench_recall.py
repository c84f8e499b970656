"""Recall on chats: is a question's answer in what the model gets, question after question?

Run: ``uv run python bench/bench_recall.py`` (``--sources chat,memorybank,bfcl``, ``--windows 1000,2000,4000``,
``--asking sequence,edit``, ``--callers full,adopt``, ``--chats N`` generated chats). Every figure is measured in
this run; the counts are deterministic (the extractive summarizer, no model).

The chats and their questions with accepted answers are `chainsum.testing.chat_probes`: generated chats
(``chat(400, seed=1..N)``, planted facts), the memorybank companion chats (questions derived from what the user
stated) and BFCL v4 memory (each scenario's conversations, its probe questions and accepted answers), from
``../shared/corpora`` when present. Each chat is fed to a `ContextManager` (``HeuristicCounter``, the extractive
summarizer, an in-memory archive) one request per user message, then its questions are asked:

- ``sequence``: each question a new user message appended, the manager prepares the request, a fixed assistant reply
  is appended, then the next question;
- ``edit``: the history as fed, its last user message replaced by each question in turn (the same history, the last
  user message edited or regenerated).

The caller either keeps its full history and sends it all (``full``: a proxy's client) or sends back what
`prepare` returned plus the new messages (``adopt``: a Strands or LangChain state). A question counts as answered
when one of its accepted answers is in the request sent (its JSON, small letters), as a whole word. Modes: recall
on (`ManagerConfig()`), recall off (``recall_token_ratio=0``), and plain truncation at the same window
(`chainsum.testing.baselines.truncate` of the history the full caller holds). Printed per source, window, asking
and caller: questions, answered with recall on, off, truncation, the targets (on >= min(2x truncation, 0.75), off
>= truncation), the requests over the window (every request prepared, feed and questions, counted on what was
sent; target 0), and as a ceiling the share whose answer is anywhere in the full history.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chainsum import formats
from chainsum.manager import ContextManager, ManagerConfig
from chainsum.messages import message_to_dict
from chainsum.store import MemoryArchive
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing import corpora_root
from chainsum.testing.baselines import truncate
from chainsum.testing.chat_probes import ProbedChat, bfcl_chats, generated_chats, memorybank_chats
from chainsum.tokens import HeuristicCounter

REPLY = "Let me think about what you told me."
"""The assistant's reply after each question asked in sequence (it names no answer)."""

COUNTER = HeuristicCounter()
MODES = {"on": ManagerConfig(), "off": ManagerConfig(recall_token_ratio=0)}


@dataclass
class Tally:
    questions: int = 0
    answered: int = 0
    over: int = 0
    requests: int = 0


def _text(items: Sequence[Any]) -> str:
    return json.dumps(list(items), ensure_ascii=False, default=str).lower()


def _over(items: Sequence[Any], window: int) -> bool:
    return COUNTER.count_messages(formats.load(list(items)).messages) > window


class Caller:
    """One app talking to one `ContextManager`: holds its history as `full` or `adopt` (see the module docstring)."""

    def __init__(self, config: ManagerConfig, window: int, adopt: bool, tally: Tally) -> None:
        self.manager = ContextManager(
            config, context_window=window, summarizers=[ExtractiveSummarizer()], archive=MemoryArchive()
        )
        self.window, self.adopt, self.tally = window, adopt, tally
        self.full: list[dict[str, Any]] = []
        """The history as the user sees it (what a full caller sends)."""
        self.held: list[Any] = []
        """What an adopting caller holds: the last request sent, and what came since."""

    def send(self, new: Sequence[dict[str, Any]]) -> list[Any]:
        """Append `new` and prepare the request; returns it (what the model gets)."""
        self.full.extend(new)
        self.held.extend(new)
        prepared = self.manager.prepare_sync(list(self.held) if self.adopt else list(self.full))
        sent = list(prepared.messages)
        self.tally.requests += 1
        self.tally.over += _over(sent, self.window)
        if self.adopt:
            self.held = sent
        return sent

    def drop_last(self) -> None:
        """Take the last user message back (an edit replaces it): an adopting caller drops it and anything after."""
        self.full.pop()
        while self.held:
            last = self.held.pop()
            role = last.get("role") if isinstance(last, dict) else None
            if role == "user" and not str(last.get("content", "")).startswith("[chainsum recall"):
                break

    def append(self, message: dict[str, Any]) -> None:
        self.full.append(message)
        self.held.append(message)


def feed(chat: ProbedChat, caller: Caller) -> None:
    """The chat, one request per user message (the reply appended after it)."""
    pending: list[dict[str, Any]] = []
    for message in chat.messages:
        pending.append(message)
        if message["role"] == "user":
            caller.send(pending)
            pending = []
        elif message["role"] == "assistant":
            caller.append(message)
            pending = []


def ask(chat: ProbedChat, window: int, mode: str, asking: str, adopt: bool) -> Tally:
    tally = Tally()
    if mode == "truncation":
        history = [dict(m) for m in chat.messages]
        for probe in chat.probes:
            question = {"role": "user", "content": probe.question}
            if asking == "edit":
                asked = [*history[:-1], question] if history[-1]["role"] == "user" else [*history, question]
            else:
                history.append(question)
                asked = history
            kept = truncate(formats.load(asked).messages, window, COUNTER)
            tally.questions += 1
            tally.requests += 1
            tally.answered += probe.answered_by(_text([message_to_dict(m) for m in kept]))
            if asking == "sequence":
                history.append({"role": "assistant", "content": REPLY})
        return tally
    caller = Caller(MODES[mode], window, adopt, tally)
    feed(chat, caller)
    edit_base_ends_in_user = chat.messages[-1]["role"] == "user"
    for k, probe in enumerate(chat.probes):
        question = {"role": "user", "content": probe.question}
        if asking == "edit" and (k > 0 or edit_base_ends_in_user):
            caller.drop_last()
        sent = caller.send([question])
        tally.questions += 1
        tally.answered += probe.answered_by(_text(sent))
        if asking == "sequence":
            caller.append({"role": "assistant", "content": REPLY})
    return tally


def sources(names: Sequence[str], n_chats: int) -> dict[str, list[ProbedChat]]:
    root = corpora_root()
    out: dict[str, list[ProbedChat]] = {}
    for name in names:
        chats = (
            generated_chats(n_chats)
            if name == "chat"
            else memorybank_chats(root)
            if name == "memorybank"
            else bfcl_chats(root)
        )
        if chats:
            out[name] = chats
        else:
            print(f"({name}: corpus not found under {root}, left out)")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sources", default="chat,memorybank,bfcl")
    parser.add_argument("--windows", default="1000,2000,4000")
    parser.add_argument("--asking", default="sequence,edit")
    parser.add_argument("--callers", default="full,adopt")
    parser.add_argument("--chats", type=int, default=3, help="generated chats (chat(400, seed=1..N))")
    parser.add_argument(
        "--recall-ratio", type=float, default=None, help="recall_token_ratio with recall on (default: the config's)"
    )
    args = parser.parse_args()
    if args.recall_ratio is not None:
        MODES["on"] = ManagerConfig(recall_token_ratio=args.recall_ratio)
    started = time.perf_counter()
    windows = [int(w) for w in args.windows.split(",")]
    print(
        f"{'source':<11} {'window':>6} {'asking':<8} {'caller':<6} {'questions':>9} {'ceiling':>7} {'on':>6} "
        f"{'off':>6} {'trunc':>6} {'on target':>9} {'off>=tr':>7} {'over':>5}"
    )
    misses: list[str] = []
    for name, chats in sources(args.sources.split(","), args.chats).items():
        ceiling = sum(p.answered_by(_text(c.messages)) for c in chats for p in c.probes)
        for window in windows:
            for asking in args.asking.split(","):
                base: Tally | None = None
                for caller in args.callers.split(","):
                    adopt = caller == "adopt"
                    got: dict[str, Tally] = {}
                    for mode in ("on", "off", "truncation"):
                        if mode == "truncation" and base is not None:
                            got[mode] = base
                            continue
                        total = Tally()
                        for c in chats:
                            t = ask(c, window, mode, asking, adopt)
                            total.questions += t.questions
                            total.answered += t.answered
                            total.over += t.over
                            total.requests += t.requests
                        got[mode] = total
                    base = got["truncation"]
                    n = max(1, got["on"].questions)
                    on, off, tr = (got[m].answered / n for m in ("on", "off", "truncation"))
                    target = min(2 * tr, 0.75)
                    met_on, met_off = on >= target, off >= tr
                    over = got["on"].over + got["off"].over
                    print(
                        f"{name:<11} {window:>6} {asking:<8} {caller:<6} {got['on'].questions:>9} "
                        f"{ceiling / n:>7.2f} {on:>6.2f} {off:>6.2f} {tr:>6.2f} "
                        f"{('yes' if met_on else 'NO') + f' {target:.2f}':>9} {'yes' if met_off else 'NO':>7} "
                        f"{over:>5}"
                    )
                    if not (met_on and met_off and over == 0):
                        misses.append(f"{name} {window} {asking} {caller}")
    print(f"targets missed: {len(misses)}" + (f" ({'; '.join(misses)})" if misses else ""))
    print(f"time={time.perf_counter() - started:.1f}s")


if __name__ == "__main__":
    main()
