"""What the extractive summaries carry: an agent span's requests, files, commands and errors; a chat's facts.

Run: ``uv run python bench/bench_summaries.py`` (``--parts a``, ``--parts b``; ``--limit N`` generated spans and
chats per kind). Every figure is measured in this run, against a baseline measured in the same run.

a. Agent spans. Spans of the Claude Code sessions (the shared corpora, else the excerpts in ``tests/data/corpora``;
   consecutive runs of ``--span`` messages, never cutting a tool result from its call) and generated spans in
   three tool dialects (`chainsum.testing.coding`: Claude Code's ``Bash``/``Read``/``Edit``, Codex's
   ``exec_command``/``shell``/``apply_patch``, a generic agent's ``run``/``read_file`` with ``exit_code``). Each
   span is summarized by `ExtractiveSummarizer` with a length asked for (``--rooms`` tokens, as a compaction asks),
   and next to it the naive baseline: the span's text cut to the same number of characters (head and tail,
   `clip_body`). Printed per source and room: the share of the span's user requests (their first 60 characters),
   file paths (read or written: ``file_path``/``path``/``file``/``filename`` arguments, ``apply_patch`` headers),
   commands (their first 60 characters) and error lines (of every failing command or tool result flagged as an
   error: the first line saying error/failed/traceback/panic/fatal/exception, else its first line) present in the
   summary, whitespace folded. The ground truth is found by this script's own code, not the summarizer's.
   Then the time of one summary of a big span (a whole Claude Code session; ``agent_session(2000)``; a generated
   span of 60 steps whose outputs are about 25 KB each), median of 3.
b. Chat facts without recall: generated chats (``chat(400, seed=1..--limit/10)``, their planted facts) and the
   memorybank chats (``../shared/corpora/memorybank``; the facts: every number, date and capitalized name a user
   states after a sentence's first word), fed to a `ContextManager` with recall off (``recall_token_ratio=0``) one
   request at a time, then a last question; the share of facts present in the prepared context, next to plain
   truncation at the same window (the system prompt and the newest messages that fit). Target: >= truncation.
   The facts, the feed and the baseline are `chainsum.testing.chat_facts`, which the memorybank test of
   ``tests/summarize/test_chat.py`` uses too. ``--chain-depth N``: the same with ``max_summary_chain_depth=N`` (at
   that cap the record's oldest summaries leave the context for the archive).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from chainsum import formats
from chainsum.manager import ManagerConfig
from chainsum.messages import Message, Text, ToolCall
from chainsum.summarize import ExtractiveSummarizer, clip_body, render_body, render_transcript
from chainsum.testing import corpora_root, iter_documents
from chainsum.testing.chat_facts import contains, memorybank_chats, prepared_without_recall, stated_facts, truncated
from chainsum.testing.coding import DIALECTS, coding_span, spans_of
from chainsum.testing.sessions import agent_session, chat
from chainsum.tokens import HeuristicCounter

_WS = re.compile(r"\s+")
_PATH_KEYS = ("file_path", "path", "file", "filename", "notebook_path")
_PATCH_HEADER = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
_EXIT = re.compile(r"(?:Exit code:? |\"exit_code\": ?|Process exited with code )(-?\d+)")
_ERROR_LINE = re.compile(r"(?i)error|failed|traceback|panic|fatal|exception")
_HEAD = 60
_NOTE = re.compile(r"\[[^\]]*\]")
"""A text part that is only a bracketed note ("[Request interrupted by user for tool use]"): not a request."""


def fold(text: str) -> str:
    return _WS.sub(" ", text).strip()


@dataclass
class Truth:
    requests: list[str] = field(default_factory=list[str])
    paths: list[str] = field(default_factory=list[str])
    commands: list[str] = field(default_factory=list[str])
    errors: list[str] = field(default_factory=list[str])

    def kinds(self) -> dict[str, list[str]]:
        return {"requests": self.requests, "paths": self.paths, "commands": self.commands, "errors": self.errors}


def _json(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _command(call: ToolCall, args: dict[str, Any] | None) -> str | None:
    if args is None:
        return None
    value: object = args.get("command", args.get("cmd"))
    if isinstance(value, list) and value:
        words = [str(v) for v in cast("list[object]", value)]
        return words[-1] if len(words) >= 3 and words[-2] in ("-c", "-lc") else " ".join(words)
    return value if isinstance(value, str) and call.name.lower() in ("bash", "shell", "exec_command", "run") else None


def truth(span: Sequence[Message]) -> Truth:
    """What a summary of `span` should name, found independently of the summarizer."""
    out = Truth()
    calls: dict[str, ToolCall] = {}
    for m in span:
        said = [p.text for p in m.parts if isinstance(p, Text) and not _NOTE.fullmatch(p.text.strip())]
        if m.role == "user" and said and "".join(said).strip():
            out.requests.append(fold(" ".join(said)))
        for call in m.tool_calls:
            calls[call.id] = call
            args = _json(call.arguments)
            if args is not None:
                out.paths += [v for k in _PATH_KEYS if isinstance(v := args.get(k), str) and v]
            out.paths += _PATCH_HEADER.findall(call.arguments)
            command = _command(call, args)
            if command:
                out.commands.append(fold(command)[:_HEAD])
        for result in m.tool_results:
            text = result.text
            parsed = _json(text)
            if parsed is not None:  # a JSON envelope: its exit status and output text
                output = " ".join(str(parsed.get(k, "")) for k in ("stdout", "output", "stderr") if k in parsed)
                text = f"Exit code {parsed.get('exit_code', parsed.get('returncode', 0))}\n{output}"
            status = _EXIT.search(text[:300])
            if not (result.is_error or (status is not None and status.group(1) != "0")):
                continue
            lines = [fold(x) for x in text.splitlines() if x.strip() and not _EXIT.match(x.strip())]
            lines = [x for x in lines if not x.startswith("Wall time")]
            pick = next((x for x in lines if _ERROR_LINE.search(x)), lines[0] if lines else None)
            if pick:
                out.errors.append(pick[:_HEAD])
    for kind in (out.requests, out.paths, out.commands, out.errors):
        kind[:] = list(dict.fromkeys(kind))
    return out


def named(kind: str, item: str, folded: str) -> bool:
    """Whether a summary (whitespace folded) names `item`: verbatim; a request when one of its sentences starts
    the same way for 30 characters (a summary keeps a request's first sentence or the ones that state facts)."""
    if kind != "requests":
        return item in folded
    return any(head[:30] in folded for head in re.split(r"(?<=[.!?]) ", item) if head.strip())


@dataclass
class Score:
    found: dict[str, int] = field(default_factory=dict[str, int])
    total: dict[str, int] = field(default_factory=dict[str, int])

    def add(self, facts: Truth, text: str) -> None:
        folded = fold(text)
        for kind, items in facts.kinds().items():
            self.total[kind] = self.total.get(kind, 0) + len(items)
            self.found[kind] = self.found.get(kind, 0) + sum(1 for x in items if named(kind, x, folded))

    def share(self, kind: str) -> str:
        total = self.total.get(kind, 0)
        return f"{self.found.get(kind, 0) / total:6.1%} of {total:<4}" if total else f"{'-':>6} of {0:<4}"


def claude_spans(size: int) -> list[list[Message]]:
    spans: list[list[Message]] = []
    for doc in iter_documents(include_subagents=False):
        if doc.label.startswith("claude-code/"):
            spans += spans_of(formats.load(doc.data, doc.format).messages, size)
    if not spans:  # no corpora: the excerpts the tests use
        from pathlib import Path

        root = Path(__file__).resolve().parents[1] / "tests" / "data" / "corpora"
        for doc in iter_documents(root, include_subagents=False):
            if doc.label.startswith("claude-code/"):
                spans += spans_of(formats.load(doc.data, doc.format).messages, size)
    return spans


def bench_spans(size: int, rooms: Sequence[int], limit: int) -> None:
    summarizer = ExtractiveSummarizer()
    sources: dict[str, list[list[Message]]] = {"claude-code corpus": claude_spans(size)}
    for dialect in DIALECTS:
        sources[f"generated {dialect}"] = [list(coding_span(s, dialect=dialect).messages) for s in range(limit)]
    print("a. agent spans: share of each kind present in the summary (extractive) and in the span's text cut to the")
    print(f"   same length (naive); spans of about {size} messages; 'of' = how many the spans hold in all")
    head = "".join(f"{k:>22}" for k in ("requests", "file paths", "commands", "error lines"))
    print(f"{'source':<20} {'room':>5} {'summarizer':<10}{head} {'chars':>7}")
    for name, spans in sources.items():
        facts = [truth(s) for s in spans]
        for room in rooms:
            scores = {"extractive": Score(), "naive": Score()}
            chars: list[int] = []
            for span, fact in zip(spans, facts, strict=True):
                summary = summarizer.summarize_text(render_transcript(span, "context", target_tokens=room))
                chars.append(len(summary))
                naive = clip_body("\n".join(render_body(m) for m in span), len(summary))
                scores["extractive"].add(fact, summary)
                scores["naive"].add(fact, naive)
            for label, score in scores.items():
                cols = "".join(f"{score.share(k):>22}" for k in ("requests", "paths", "commands", "errors"))
                print(f"{name:<20} {room:>5} {label:<10}{cols} {statistics.mean(chars):>7.0f}")
    print("\n   time of one summary of a big span (summarize_text, median of 3):")
    big: dict[str, list[Message]] = {}
    for doc in iter_documents(include_subagents=False):
        if doc.label.startswith("claude-code/"):
            big[f"whole {doc.label}"] = [m for m in formats.load(doc.data, doc.format).messages if m.role != "system"]
            break
    big["agent_session(2000)"] = [m for m in formats.load(agent_session(2000)).messages if m.role != "system"]
    # long tool outputs (about 25 KB each): what the identifiers' head-and-tail sample is for
    big["coding_span(steps=60, filler=400)"] = list(coding_span(1, steps=60, filler=400).messages)
    for label, span in big.items():
        transcript = render_transcript(span, "context", target_tokens=2000)
        times: list[float] = []
        for _ in range(3):
            started = time.perf_counter()
            summarizer.summarize_text(transcript)
            times.append(time.perf_counter() - started)
        print(
            f"   {label}: {len(span)} messages, {len(transcript):,} characters, {statistics.median(times) * 1e3:.0f} ms"
        )


# b. chat facts -----------------------------------------------------------------------------------------------------
def memorybank() -> list[list[dict[str, Any]]]:
    return memorybank_chats(corpora_root())


def bench_chat(limit: int, depth: int | None) -> None:
    counter = HeuristicCounter()
    question = "What do you remember about me?"
    config = ManagerConfig(recall_token_ratio=0)
    if depth is not None:
        config = replace(config, max_summary_chain_depth=depth)
    print("\nb. chat facts without recall: share of facts present in the prepared context after the whole chat and a")
    print("   last question; chainsum (recall off) vs plain truncation at the same window; target >= truncation")
    if depth is not None:
        print(f"   (max_summary_chain_depth={depth}, not the default {ManagerConfig().max_summary_chain_depth})")
    print(f"{'chats':<24} {'window':>7} {'facts':>6} {'chainsum':>9} {'truncation':>11} {'ahead':>6} {'behind':>7}")
    cases: list[tuple[str, list[list[dict[str, Any]]], list[list[str]], list[int | float]]] = []
    generated = [chat(400, seed=s) for s in range(1, limit + 1)]
    cases.append(
        ("chat(400), planted", [g.messages for g in generated], [[f.answer for f in g.facts] for g in generated], [0.2])
    )
    bank = memorybank()
    if bank:
        cases.append(("memorybank, stated", bank, [stated_facts(c) for c in bank], [1000, 2000]))
    for label, chats, facts, windows in cases:
        for window_spec in windows:
            got = {"chainsum": 0, "truncation": 0}
            total = ahead = behind = 0
            for messages, answers in zip(chats, facts, strict=True):
                tokens = counter.count_messages(formats.load(messages).messages)
                window = int(window_spec * tokens) if isinstance(window_spec, float) else window_spec
                ours = json.dumps(prepared_without_recall(messages, window, question, config), default=str).lower()
                base = json.dumps(truncated([*messages, {"role": "user", "content": question}], window, counter))
                base = base.lower()
                a = sum(contains(ours, x) for x in answers)
                b = sum(contains(base, x) for x in answers)
                got["chainsum"] += a
                got["truncation"] += b
                total += len(answers)
                ahead += a > b
                behind += a < b
            shown = f"{window_spec:.0%} of tokens" if isinstance(window_spec, float) else str(window_spec)
            print(
                f"{label:<24} {shown:>7} {total:>6} {got['chainsum'] / max(1, total):>9.1%} "
                f"{got['truncation'] / max(1, total):>11.1%} {ahead:>6} {behind:>7}"
            )
    print("   ahead/behind: conversations where chainsum keeps more/fewer of their facts than truncation")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--parts", default="a,b", help="a (agent spans), b (chat facts), or both")
    parser.add_argument("--span", type=int, default=24, help="a: messages per Claude Code span")
    parser.add_argument("--rooms", default="150,400,1000", help="a: summary lengths asked for, in tokens")
    parser.add_argument(
        "--limit", type=int, default=30, help="a: generated spans per dialect; b: generated chats (/10)"
    )
    parser.add_argument(
        "--chain-depth", type=int, default=None, help="b: max_summary_chain_depth (default: the manager's)"
    )
    args = parser.parse_args()
    parts = {p.strip() for p in args.parts.split(",")}
    started = time.perf_counter()
    if "a" in parts:
        bench_spans(args.span, [int(x) for x in args.rooms.split(",")], args.limit)
    if "b" in parts:
        bench_chat(max(1, args.limit // 10), args.chain_depth)
    print(f"\ntime={time.perf_counter() - started:.1f}s")


if __name__ == "__main__":
    main()
