"""Records that carry nothing (issue 21): how many of the record blocks a replay writes say nothing of the messages
they stand for.

Run: ``uv run python bench/bench_records.py`` (``--generated N`` sessions, ``--windows 16000 32000``).

Each session is replayed through `ContextManager.prepare_sync` with the default `ExtractiveSummarizer`, one request
before every assistant message (the caller sends its whole history each time), at each window. Every record block
the requests carry is counted once (by id), and classed as *content-less* by
`chainsum.testing.record_content.carries_nothing`: once the lines a record writes about itself are taken out, none
of its words is a word of the history it was written from. Sessions: every Claude Code session of the shared
corpora (else the excerpts in ``tests/data/corpora``) and `agent_session(n, seed)` for seeds ``1..N`` (n from 60 to
200 messages, tool output up to 60 KB). Printed per source and window: blocks written, content-less ones (archive
notes, summaries), compactions.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass

from chainsum import formats
from chainsum.chain import record_blocks
from chainsum.manager import ContextManager, ManagerConfig
from chainsum.messages import Message
from chainsum.rules import repair
from chainsum.store import MemoryArchive
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing import corpora_root, iter_documents
from chainsum.testing.record_content import carries_nothing, message_words
from chainsum.testing.sessions import agent_session


@dataclass
class Count:
    blocks: int = 0
    empty_notes: int = 0
    empty_summaries: int = 0
    compactions: int = 0

    def add(self, other: Count) -> None:
        self.blocks += other.blocks
        self.empty_notes += other.empty_notes
        self.empty_summaries += other.empty_summaries
        self.compactions += other.compactions


def replay(messages: Sequence[Message], window: int, examples: list[str]) -> Count:
    manager = ContextManager(
        ManagerConfig(), context_window=window, summarizers=[ExtractiveSummarizer()], archive=MemoryArchive()
    )
    seen: set[str] = set()
    count = Count()
    for end in range(2, len(messages) + 1):
        if end < len(messages) and messages[end].role != "assistant":
            continue
        prepared = manager.prepare_sync(list(messages[:end]))
        count.compactions += prepared.changed
        source: set[str] | None = None
        for m in prepared.messages:
            for block in record_blocks(m) or ():
                if block.id in seen:
                    continue
                seen.add(block.id)
                count.blocks += 1
                source = source if source is not None else message_words(messages[:end])
                if carries_nothing(block.text, source):
                    if block.depth == 0:
                        count.empty_notes += 1
                    else:
                        count.empty_summaries += 1
                    if len(examples) < 5:
                        examples.append(f"request {end}: {block.text[:160]!r}")
    return count


def claude_code() -> list[tuple[str, list[Message]]]:
    root = corpora_root()
    if root is None:
        from pathlib import Path

        root = Path(__file__).resolve().parents[1] / "tests" / "data" / "corpora"
    out: list[tuple[str, list[Message]]] = []
    for doc in iter_documents(root, include_subagents=False):
        if doc.format == "claude-code":
            loaded = list(formats.load(doc.data, format=doc.format).messages)
            out.append((doc.label, list(repair(loaded, "anthropic").messages)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--generated", type=int, default=20, help="generated agent sessions (seeds 1..N)")
    parser.add_argument("--windows", type=int, nargs="+", default=[16_000, 32_000])
    args = parser.parse_args()
    sources: list[tuple[str, list[tuple[str, list[Message]]]]] = [("claude-code", claude_code())]
    generated: list[tuple[str, list[Message]]] = []
    for seed in range(1, args.generated + 1):
        n = 60 + (seed * 37) % 141
        generated.append((f"agent_session({n}, seed={seed})", list(formats.load(agent_session(n, seed=seed)).messages)))
    sources.append(("generated", generated))
    print(f"{'source':<12} {'window':>7} {'sessions':>8} {'blocks':>7} {'empty notes':>11} {'empty sums':>10}", end="")
    print(f" {'compactions':>11} {'time s':>7}")
    for name, sessions in sources:
        for window in args.windows:
            total = Count()
            examples: list[str] = []
            started = time.perf_counter()
            for _, messages in sessions:
                total.add(replay(messages, window, examples))
            took = time.perf_counter() - started
            print(
                f"{name:<12} {window:>7} {len(sessions):>8} {total.blocks:>7} {total.empty_notes:>11} "
                f"{total.empty_summaries:>10} {total.compactions:>11} {took:>7.1f}"
            )
            for example in examples:
                print(f"    {example}")


if __name__ == "__main__":
    main()
