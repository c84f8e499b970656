"""Cost benchmark: what a long agent session costs with prompt caching through chainsum and through the summarizing
libraries it is compared with, and what each keeps of the session, in the same process, on the same requests.

Run: ``uv run --with zrb --with langmem python bench/bench_cost.py`` (``--sessions 500,4500``, ``--window``,
``--no-corpora``, ``--peers``). zrb and langmem are not project dependencies: without ``--with`` they are reported
as not installed and left out.

Workloads: generated coding-agent sessions (`chainsum.testing.sessions.agent_session`, OpenAI chat messages: tool
output of 0.1 to 60 KB, planted ``ERR-nnnnn`` facts) of ``--sessions`` messages (500: 223 model requests, 4,500:
about 2,000) at a ``--window`` (32K) window, and the Claude Code sessions of the shared corpora
(``../shared/corpora``; skipped with a message when absent; repaired for Anthropic's rules first, as ``chainsum replay
--repair`` does: the recordings break them themselves) at the same window. A model request happens before each
assistant message (`chainsum.manager.request_indices`); each library is given the messages since its last
request and answers what it sends (`cost_peers`).

Every library summarizes with the same fake summarizer (`cost_peers.FixedRatioSummary`: every tenth line of its
input, so what it writes, and costs, grows with what it is given); chainsum is also shown with its own extractive
summarizer (no model: its calls cost nothing). Printed per workload and library:

- ``valid``: requests the provider would accept: valid by chainsum's validator AND by the independent check here
  (`independent_problems`: every tool call answered by its results before the next turn, no result without its
  call, the first message after the system messages a user message) AND within the window (``over``: requests
  over the window, which a provider refuses: they are counted as not valid, and a peer with any is not a peer
  "whose requests stay valid");
- ``compactions``: requests in which the summarizer was called (a compaction that only masks or moves messages to
  the archive is not one, but it is a break); ``breaks``: requests that are not the previous request plus new
  messages (each throws the provider's prompt cache away from the first changed message);
- ``hit``: cached input tokens over input tokens (the cached part of a request: its longest common prefix with the
  previous request, by value, Anthropic ``cache_control`` marks aside: where a request marks a block is not part of
  what the provider caches);
- ``cost``: with caching, at $3 per million fresh input tokens, $0.30 cached, the summarizer's input at $0.035 and
  its output at $0.14 (``summ.``: that part): a small model picked for the job, as users configure one (Amazon Nova
  Micro's list price; ``--price-summarizer IN,OUT``); ``cost@main``: the same requests with the summarizer priced as
  the chat model ($3 / $15). Tokens are `HeuristicCounter`'s of the canonical messages;
- ``model read`` (model coverage, issue 32): a cost counts only with the model reading what it summarizes.
  chainsum's comes from its events (`SummarizationEvent.model_chars` over ``summarized_chars``: of the text its
  compactions summarized, the share its model read; output it masked or moved to the archive is not summarized). A
  peer's is measured from outside, piece by piece (a text part, a tool result): of the text that left its requests
  (in the previous request or new, not in this one), the share its summarizer was given verbatim in that request;
  the peers summarize everything they replace. chainsum measured the same way is printed below the table, and so is
  each request where LangChain wrote "Previous conversation was too long to summarize" without calling its model;
- ``ids``: the share of the session's identifiers so far (`chainsum.testing.retention.identifiers`, the matcher
  of ``bench_retention.py`` and ``bench_budget.py``, independent of the extractive summarizer's) present in a
  request, averaged over every tenth request; ``facts``: the same for the planted ``ERR-nnnnn`` facts (generated
  sessions only);
- ``old ids`` and ``old facts``: the same for the identifiers and facts that occur only in the history's messages
  before its newest ``--old-tail`` x window tokens (`OLD_TAIL`, a tenth: 3,200 tokens at 32K; `Sampler`). Every
  library sends the newest messages alike (verbatim, or the newest tool output clipped), and they are most of what
  ``ids`` counts (every library above 33 %), so ``ids`` hardly tells one compaction from another; the old part is
  what each had to compact, and its share what its compaction kept. The split depends on the history and the
  window only. Why a tenth: the tail left out should be one every library keeps verbatim, and the least any kept
  after a compaction here was zrb's 2,049-2,426 tokens (its own log: "keeping 10 verbatim (2426 tokens)"); a
  larger tail credits a library for keeping more verbatim than the others right after compacting (chainsum's
  reset keeps about 12K at 32K, LangChain 9.6K), which is not what its compaction kept. Measured at
  ``--sessions 500``: chainsum's old-ids ratio to LangChain on the two corpus sessions is 1.38x / 1.20x at 0.05,
  1.39x / 1.21x at 0.1, 1.72x / 1.33x at 0.25 and 2.78x / 1.89x at 0.5.
- ``repl ids`` and ``repl facts``: of the identifiers and facts of the history so far that occur only in messages
  the request does not carry verbatim (text part, tool call or result, whatever message holds it: what the library
  summarized, masked, clipped or left out),
  the share present in the request, summed over the samples. Each library is judged on what it replaced itself,
  so this is the measure a ratio of 3x can be reached on: ``ids`` and ``old ids`` count what every library keeps
  verbatim too, and a library keeping more than a third of them (LangChain 35-51 % here) leaves no 3x possible,
  however good the other's summaries.

Then chainsum's `ContextManager.choice` (its trigger and reset, and why: `chainsum.manager._depth`, the cache-aware
reset) and the target, for both chainsum rows: cost at most that of the cheapest summarizing library whose requests
all stay valid, keeping at least 3x its identifiers and facts, judged twice: on the whole history so far (``ids``,
``facts``) and on its old part (``old ids``, ``old facts``); where the cheapest library is one with refused
requests, the ratios against it too. Every figure is measured in this run.

Peers (`cost_peers`): LangChain's ``SummarizationMiddleware``, LangMem's ``summarize_messages``, Strands'
``SummarizingConversationManager`` (strands-agents, a project extra: its threshold check and overflow recovery as the
agent runs them) and zrb's history summarizer. chainsum's ``ManagerConfig`` comes from the ``SUMMARIZATION_*``
variables (unset: the defaults: the cache-aware reset on, ``SUMMARIZATION_CACHE_AWARE=false`` turns it off; the model
reads every span it summarizes, the extractive summarizer configured after it writes what the model failed on;
``SUMMARIZATION_MODEL_TOKENS_PER_COMPACTION`` is the opt-in bound on what the model reads).

Time: the identifiers of the history so far were rescanned at every sample, quadratic in the session (at 1,000
messages 49 of the run's 75 seconds under cProfile); they are now kept up to date (`GrowingIdentifiers`, exact),
and what is left of the benchmark's own work per request (validation, token counts, prefix compare, the sample)
is bounded by the request. ``--sessions 1000 --no-corpora --peers langchain``: 28.4 -> 8.7 CPU seconds, the same
figures (2026-11-27 22:18 UTC, load 1.7). Most of a long replay's time is the peers' own.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from chainsum import formats, repair, validate
from chainsum.manager import request_indices
from chainsum.messages import Message, Part, ToolCall, ToolResult
from chainsum.testing import iter_documents
from chainsum.testing.retention import GrowingIdentifiers, identifiers, pieces, texts
from chainsum.testing.sessions import agent_session
from chainsum.tokens import HeuristicCounter
from cost_peers import PEERS, Chainsum, Peer, drive, load_openai
from phase_report import coverage_note, model_coverage, target_line

COUNTER = HeuristicCounter()
PRICE_INPUT, PRICE_CACHED = 3.00, 0.30
"""The chat model's price per million input tokens, fresh and cached (Claude Sonnet's list prices)."""
PRICE_S_IN, PRICE_S_OUT = 0.035, 0.14
"""The summarizer's price per million tokens in and out: a small model picked for the job, as users configure one
(Amazon Nova Micro's Bedrock on-demand list price, the model of the seed's example; ``--price-summarizer``)."""
MAIN_S_IN, MAIN_S_OUT = 3.00, 15.00
"""The summarizer priced as the chat model itself (the ``cost@main`` column): a user who summarizes with it."""
TOO_LONG = "Previous conversation was too long to summarize"
"""What LangChain's middleware writes as the summary, without calling its model, when the span it was to summarize
does not fit its ``trim_tokens_to_summarize``: a compaction its model never read."""
FACT = re.compile(r"\bERR-\d{5}\b")
OLD_TAIL = 0.1
"""The ``old`` measures leave out the newest messages of the history so far up to this share of the window (see
`Sampler` and the module docstring); ``--old-tail``."""


@dataclass
class Workload:
    name: str
    messages: list[Message]
    provider: str
    window: int


@dataclass
class Row:
    name: str
    requests: int = 0
    invalid: int = 0
    invalid_independent: int = 0
    not_valid: int = 0
    """Requests the provider refuses: invalid by either check, or over the window."""
    compactions: int = 0
    breaks: int = 0
    sent: int = 0
    cached: int = 0
    peak: int = 0
    over: int = 0
    cost: float = 0.0
    summarizer_cost: float = 0.0
    cost_main: float = 0.0
    """`cost` with the summarizer priced as the chat model (`MAIN_S_IN`, `MAIN_S_OUT`)."""
    replaced_chars: int = 0
    """Characters of text and tool output that left the request verbatim (in the previous request or new, not in
    this one): what the library replaced."""
    replaced_read: int = 0
    """Of `replaced_chars`, what its summarizer model was given, verbatim, in the same request."""
    coverage: float | None = None
    """The model coverage printed: chainsum's from its events (of what its compactions summarized, the share the
    model read), a peer's `replaced_read` / `replaced_chars` (it summarizes all it replaces); None: no model."""
    coverage_note: str = ""
    """chainsum's `phase_report.coverage_note` of its events, printed beside its time target."""
    too_long: int = 0
    """Requests with a new LangChain "too long to summarize" stand-in (`TOO_LONG`): its model was not called."""
    ids: float = 0.0
    facts: float | None = None
    ids_old: float = 0.0
    """``ids`` of the identifiers that occur only before the newest `OLD_TAIL` share of the window (`Sampler`)."""
    facts_old: float | None = None
    ids_replaced: float | None = None
    """Of the identifiers that occur only in messages the request does not carry verbatim, the share it has
    (`Sampler.replaced`)."""
    facts_replaced: float | None = None
    seconds: float = 0.0
    error: str | None = None
    choice: str = ""
    """chainsum's `ContextManager.choice.why`: the ratios it compacted with, and why."""


def independent_problems(messages: Sequence[Message]) -> int:
    """Problems found without chainsum's rules: each assistant's tool calls answered, by id, by the tool messages
    right after it; no tool result without its call; the first message after the system messages from the user."""
    problems = 0
    pending: set[str] = set()
    first = next((m for m in messages if m.role != "system"), None)
    if first is not None and first.role != "user":
        problems += 1
    for m in messages:
        results = [p.call_id for p in m.parts if isinstance(p, ToolResult)]
        if m.role == "tool" or (results and m.role == "user"):
            for r in results:
                if r not in pending:
                    problems += 1
                pending.discard(r)
            continue
        if pending:
            problems += 1  # calls left unanswered before this message
            pending = set()
        if m.role == "assistant":
            pending = {p.id for p in m.parts if isinstance(p, ToolCall)}
    return problems + bool(pending and messages and messages[-1].role != "assistant")


def _common_prefix(a: Sequence[Message], b: Sequence[Message]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x is not y and x != y and _unmarked(x) != _unmarked(y):
            break
        n += 1
    return n


def _unmarked(m: Message) -> Message:
    """`m` without Anthropic ``cache_control`` marks on its parts. Where a request marks a block is not part of
    what the provider caches: the mark a client (Claude Code) or chainsum moves to the newest block each request
    leaves the previous request's blocks cached (the provider reads its cache at earlier block boundaries too), so
    a message that differs from the previous request's only by its mark is no prefix break (as ``chainsum replay``
    counts it)."""
    parts: list[Part] = []
    changed = False
    for part in m.parts:
        ns = part.extras.get("anthropic")
        fields = cast(Mapping[str, Any], ns).get("fields") if isinstance(ns, Mapping) else None
        if isinstance(fields, Mapping) and "cache_control" in fields:
            kept = {k: v for k, v in cast(Mapping[str, Any], fields).items() if k != "cache_control"}
            space = {k: v for k, v in cast(Mapping[str, Any], ns).items() if k != "fields"}
            if kept:
                space["fields"] = kept
            extras = {k: v for k, v in part.extras.items() if k != "anthropic"}
            if space:
                extras["anthropic"] = space
            part = replace(part, extras=extras)
            changed = True
        parts.append(part)
    return replace(m, parts=tuple(parts)) if changed else m


def measure(work: Workload, peer: Peer, old_tail: float = OLD_TAIL) -> Row:
    row = Row(peer.name)
    cuts = request_indices(work.messages)
    steps: list[tuple[Sequence[Message], int]] = []
    pos = 0
    for cut in cuts:
        steps.append((work.messages[pos:cut], cut))
        pos = cut
    started = time.perf_counter()
    calls: list[int] = []
    original_request = peer.request

    read: list[str] = []

    async def counted(new: Sequence[Message]) -> list[Message]:
        out = await original_request(new)
        calls.append(peer.summary.calls)
        read.append("\n".join(peer.summary.inputs))
        peer.summary.inputs.clear()
        return out

    peer.request = counted  # type: ignore[method-assign]
    try:
        requests = drive(peer, steps)
    except Exception as exc:  # a library that fails on this workload: say so, go on with the others
        row.error = f"{type(exc).__name__}: {exc}"[:160]
        return row
    row.seconds = time.perf_counter() - started
    choice = getattr(peer.manager, "choice", None) if isinstance(peer, Chainsum) else None
    if choice is not None:  # (None: the code before the cache-aware reset, run for a before/after comparison)
        row.choice = choice.why
    previous: list[Message] = []
    memo: dict[int, tuple[Message, int]] = {}

    def tokens(ms: Sequence[Message]) -> int:
        total = 0
        for m in ms:
            hit = memo.get(id(m))
            if hit is None or hit[0] is not m:
                hit = (m, COUNTER.count_message(m))
                memo[id(m)] = hit
            total += hit[1]
        return total

    sampler = Sampler(work, old_tail)
    called = 0
    for n, (sent, (_, cut)) in enumerate(zip(requests, steps, strict=True)):
        row.requests += 1
        problems = bool(validate(sent, work.provider))
        row.invalid += problems
        independent = bool(independent_problems(sent))
        row.invalid_independent += independent
        row.compactions += calls[n] > called
        called = calls[n]
        k = _common_prefix(sent, previous)
        if previous and k < len(previous):
            row.breaks += 1
        _replaced(row, [*previous, *steps[n][0]], sent, read[n])
        size = tokens(sent)
        cached = tokens(sent[:k])
        row.sent += size
        row.cached += cached
        row.peak = max(row.peak, size)
        row.over += size > work.window
        row.not_valid += problems or independent or size > work.window
        row.cost += ((size - cached) * PRICE_INPUT + cached * PRICE_CACHED) / 1e6
        if n % 10 == 9:
            sampler.sample(cut, sent)
        previous = sent
    s = peer.summary
    row.summarizer_cost = (s.input_tokens * PRICE_S_IN + s.output_tokens * PRICE_S_OUT) / 1e6 if s.priced else 0.0
    main = (s.input_tokens * MAIN_S_IN + s.output_tokens * MAIN_S_OUT) / 1e6 if s.priced else 0.0
    row.cost_main = row.cost + main
    row.cost += row.summarizer_cost
    if isinstance(peer, Chainsum):
        row.coverage = model_coverage(peer.events)[0] if s.priced else None
        row.coverage_note = coverage_note(peer.events)
    elif s.priced and row.replaced_chars:
        row.coverage = row.replaced_read / row.replaced_chars
    row.ids, row.facts = _mean(sampler.ids) or 0.0, _mean(sampler.facts)
    row.ids_old, row.facts_old = _mean(sampler.ids_old) or 0.0, _mean(sampler.facts_old)
    gone, kept, gone_facts, kept_facts = sampler.replaced
    row.ids_replaced = kept / gone if gone else None
    row.facts_replaced = kept_facts / gone_facts if gone_facts else None
    return row


def _replaced(row: Row, before: Sequence[Message], sent: Sequence[Message], read: str) -> None:
    """Add to `row` what this request replaced (the text and tool output of `before`, the previous request and the
    new messages, that `sent` does not carry verbatim) and what of it the summarizer was given (`read`, its inputs
    during this request), piece by piece (`pieces`: a text part, a tool result). A library's own stand-in for a
    span its model never read (LangChain's `TOO_LONG`) is counted in `Row.too_long`."""
    kept = set(pieces(sent))
    seen = set(pieces(before))
    for piece in seen - kept:
        if len(piece) < 16:  # "ok", "Done.": too short to tell read from a coincidence
            continue
        row.replaced_chars += len(piece)
        if read and piece in read:
            row.replaced_read += len(piece)
    if any(TOO_LONG in p for p in kept - seen):
        row.too_long += 1


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


class Sampler:
    """What a request keeps of the session so far, sampled at requests in history order: ``ids`` and ``facts``, the
    share of the identifiers (`identifiers`) and planted ``ERR-nnnnn`` facts of the whole history so far present in
    the request; ``ids_old`` and ``facts_old``, the same for the OLD part only: the identifiers and facts that occur
    only in the messages before the history's newest `old_tail` x window tokens (its newest messages up to that
    many tokens, the message that crosses it included: the verbatim tail every library keeps or clips alike; an
    identifier that also occurs in that tail is not counted as old). The split depends on the history and the window
    only, not on any library, so the old share is what each library's compaction kept of what it had to compact.

    The history so far only grows: its identifiers and facts are kept up to date (`GrowingIdentifiers`; a fact is a
    match within one line), not rescanned at each sample (the rescan was most of a long replay's time)."""

    def __init__(self, work: Workload, old_tail: float) -> None:
        self.messages = work.messages
        self.tail_tokens = old_tail * work.window
        self.whole = GrowingIdentifiers()
        self.old = GrowingIdentifiers()
        self.whole_facts: set[str] = set()
        self.old_facts: set[str] = set()
        self.seen = 0
        """Messages added to `whole`."""
        self.split = 0
        """Messages added to `old`: the old part is ``messages[:split]``."""
        self.ids: list[float] = []
        self.facts: list[float] = []
        self.ids_old: list[float] = []
        self.facts_old: list[float] = []
        self.verbatim: set[str] = set()
        """Each piece (text part, tool call, tool result: `pieces`) of the history so far: a sent piece equal to one
        is verbatim, whatever message it is in (LangChain sends each of an Anthropic user message's tool results
        back as a tool message of its own)."""
        self.replaced = [0, 0, 0, 0]
        """Summed over the samples: identifiers replaced, of them present; facts replaced, of them present."""

    def sample(self, cut: int, sent: Sequence[Message]) -> None:
        """Sample the request `sent`, made with the history ``messages[:cut]`` (`cut` never goes back)."""
        new = self.messages[self.seen : cut]
        self.whole.add(new)
        self.verbatim.update(pieces(new))
        self.whole_facts.update(FACT.findall(texts(new)))
        self.seen = cut
        split, tail = cut, 0
        while split > self.split and tail < self.tail_tokens:
            split -= 1
            tail += COUNTER.count_message(self.messages[split])
        gone = self.messages[self.split : split]
        self.old.add(gone)
        self.old_facts.update(FACT.findall(texts(gone)))
        self.split = split
        recent = texts(self.messages[split:cut])
        out = texts(sent)
        found, found_facts = identifiers(out), set(FACT.findall(out))
        have = self.whole.found
        self.ids.append(len(have & found) / max(1, len(have)))
        if self.whole_facts:
            self.facts.append(len(self.whole_facts & found_facts) / len(self.whole_facts))
        old = self.old.found - identifiers(recent)
        if old:
            self.ids_old.append(len(old & found) / len(old))
        old_facts = self.old_facts - set(FACT.findall(recent))
        if old_facts:
            self.facts_old.append(len(old_facts & found_facts) / len(old_facts))
        carried = "\n".join(p for p in pieces(sent) if p in self.verbatim)
        replaced = have - identifiers(carried)
        replaced_facts = self.whole_facts - set(FACT.findall(carried))
        self.replaced[0] += len(replaced)
        self.replaced[1] += len(replaced & found)
        self.replaced[2] += len(replaced_facts)
        self.replaced[3] += len(replaced_facts & found_facts)


def workloads(sizes: Sequence[int], window: int, corpora: bool) -> list[Workload]:
    out = [Workload(f"agent_session({n})", load_openai(agent_session(n)), "openai", window) for n in sizes if n > 0]
    if corpora:
        found = False
        for doc in iter_documents(include_subagents=False):
            if doc.label.startswith("claude-code/"):
                found = True
                # the recordings break Anthropic's rules themselves (a turn written as several lines): repaired first,
                # as `chainsum replay --repair` does, so that an invalid request is the library's doing
                messages = repair(formats.load(doc.data, doc.format).messages, "anthropic").messages
                out.append(Workload(doc.label, list(messages), "anthropic", window))
        if not found:
            print("corpora: not found (../shared/corpora or $CHAINSUM_CORPORA); the Claude Code sessions are skipped")
    return out


def make_peers(work: Workload, names: Sequence[str]) -> list[Peer | tuple[str, str]]:
    peers: list[Peer | tuple[str, str]] = [
        Chainsum(work.window, work.provider),
        Chainsum(work.window, work.provider, name="chainsum-extractive", extractive=True),
    ]
    for name in names:
        try:
            peers.append(PEERS[name](work.window, work.provider))
        except ImportError as exc:
            peers.append((name, f"not installed ({exc.name}): uv run --with {name} python bench/bench_cost.py"))
        except Exception as exc:
            peers.append((name, f"cannot be driven: {type(exc).__name__}: {exc}"))
    return peers


def print_rows(work: Workload, rows: list[Row], old_tail: float = OLD_TAIL) -> None:
    print(f"\n{work.name}: {len(request_indices(work.messages)):,} requests, {work.window:,}-token window")
    print(
        f"{'library':20} {'valid':>11} {'compactions':>11} {'breaks':>6} {'hit':>6} {'peak':>7} {'over':>4}"
        f" {'cost':>9} {'summ.':>8} {'cost@main':>9} {'model read':>10} {'ids':>6} {'facts':>6} {'old ids':>7}"
        f" {'old facts':>9} {'repl ids':>8}"
        f" {'repl facts':>10} {'seconds':>7}"
    )
    for r in rows:
        if r.error is not None:
            print(f"{r.name:20} {r.error}")
            continue
        valid = r.requests - r.not_valid
        hit = r.cached / r.sent if r.sent else 0.0
        facts = "-" if r.facts is None else f"{100 * r.facts:.1f}%"
        facts_old = "-" if r.facts_old is None else f"{100 * r.facts_old:.1f}%"
        ids_replaced = "-" if r.ids_replaced is None else f"{100 * r.ids_replaced:.1f}%"
        facts_replaced = "-" if r.facts_replaced is None else f"{100 * r.facts_replaced:.1f}%"
        flag = (
            ""
            if r.invalid == r.invalid_independent
            else f" (chainsum {r.invalid}, independent {r.invalid_independent})"
        )
        print(
            f"{r.name:20} {valid:5d}/{r.requests:<5d} {r.compactions:11d} {r.breaks:6d} {100 * hit:5.1f}%"
            f" {r.peak:7,d} {r.over:4d} ${r.cost:8.4f} ${r.summarizer_cost:7.4f} ${r.cost_main:8.4f}"
            f" {_share(r.coverage):>10} {100 * r.ids:5.1f}% {facts:>6}"
            f" {100 * r.ids_old:6.1f}% {facts_old:>9} {ids_replaced:>8} {facts_replaced:>10} {r.seconds:7.1f}{flag}"
        )
    print(
        f"old ids / old facts: of the identifiers and facts that occur only before the history's newest"
        f" {old_tail:.2f} x window = {old_tail * work.window:,.0f} tokens (its newest messages up to there, the one"
        f" crossing it included), the share present in the request"
    )
    print(
        "model read: chainsum's from its events (of the text its compactions summarized, the share its model read;"
        " masked or moved output is not summarized); a peer's, of the text and tool output that left its requests"
        " (it summarizes all of it), the share given to its model verbatim; '-': no model"
    )
    for r in rows:
        if r.name == "chainsum" and r.replaced_chars:
            print(
                f"chainsum, measured as the peers are: of the {r.replaced_chars:,} characters that left its requests,"
                f" its model was given {100 * r.replaced_read / r.replaced_chars:.1f} % (the rest masked, clipped or"
                " moved to the archive, recallable, or written by the extractive summarizer)"
            )
        if r.too_long:
            print(f"{r.name}: {r.too_long} request(s) with '{TOO_LONG}' as the summary (its model not called)")
    for r in rows:
        if r.choice:
            print(f"{r.name}: {r.choice}")
    _target(rows)


def _share(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _target(rows: list[Row]) -> None:
    """chainsum (both summarizers) against the cheapest peer whose requests all stay valid (none refused: invalid by
    either check or over the window), and, for the record, against the cheapest peer at all."""
    peers = [r for r in rows if not r.name.startswith("chainsum") and r.error is None and r.requests]
    valid = [r for r in peers if r.not_valid == 0]
    refused = [f"{r.name} ({r.not_valid})" for r in peers if r.not_valid]
    if refused:
        print(f"requests refused (invalid or over the window): {', '.join(refused)}")
    for ours in (r for r in rows if r.name.startswith("chainsum") and r.error is None and r.requests):
        if not valid:
            print(f"target ({ours.name}): no peer kept every request valid here")
        else:
            best = min(valid, key=lambda r: r.cost)
            print(f"target ({ours.name}): {_against(ours, best)}")
            if ours.coverage is not None:
                print(_coverage_target(ours, best, min(valid, key=lambda r: r.cost_main)))
        if peers and (cheapest := min(peers, key=lambda r: r.cost)) not in valid:
            print(f"target ({ours.name}) against the cheapest peer, refused requests too: {_against(ours, cheapest)}")
        if peers and ours.seconds > 0:  # issue 23: the time to answer every request, in the same process
            fastest = min(peers, key=lambda r: r.seconds)
            note = f" ({fastest.not_valid} of its requests refused)" if fastest.not_valid else ""
            ratio = ours.seconds / fastest.seconds
            print(target_line(ratio, fastest.name + note, ours=ours.name, what="time", coverage=ours.coverage_note))


def _coverage_target(ours: Row, best: Row, best_main: Row) -> str:
    """Issue 32's target: cost at most the cheapest valid peer's, at the cheap summarizer's price, with the model
    reading what it summarizes (coverage >= 95 %); the main model's price beside it."""
    met = ours.coverage is not None and ours.coverage >= 0.95 and ours.cost <= best.cost and not ours.not_valid
    return (
        f"target ({ours.name}, issue 32): model coverage {_share(ours.coverage)} (>= 95 %), cost ${ours.cost:.4f}"
        f" <= {best.name} ${best.cost:.4f} at the summarizer's price: {'met' if met else 'NOT met'}; at the main"
        f" model's price ${ours.cost_main:.4f} vs {best_main.name} ${best_main.cost_main:.4f}"
    )


def _against(ours: Row, peer: Row) -> str:
    """cost <= the peer's, >= 3x its identifiers and facts: the ratios, met or not, on the whole history so far
    (``ids``, ``facts``) and on its old part (``old ids``, ``old facts``), each with its own verdict."""
    ok_cost = ours.cost <= peer.cost and not ours.not_valid

    def ratio(ours: float, theirs: float) -> tuple[str, bool]:
        if theirs:
            return f"{ours / theirs:.2f}x", ours / theirs >= 3
        # the peer kept none: any share is more than 3x none, no share is not
        return f"{100 * ours:.1f} % against none", ours > 0

    def ratios(label: str, ids: tuple[float, float], facts: tuple[float | None, float | None]) -> str:
        shown, ok = ratio(*ids)
        text = f"{label}: identifiers {shown}"
        if facts[0] is not None and facts[1] is not None:
            shown, ok_facts = ratio(facts[0], facts[1])
            text += f", facts {shown}"
            ok = ok and ok_facts
        return f"{text} (target >= 3x): {'met' if ok and ok_cost else 'NOT met'}"

    whole = ratios("whole history", (ours.ids, peer.ids), (ours.facts, peer.facts))
    old = ratios("old part", (ours.ids_old, peer.ids_old), (ours.facts_old, peer.facts_old))
    replaced = ratios(
        "what each replaced",
        (ours.ids_replaced or 0.0, peer.ids_replaced or 0.0),
        (ours.facts_replaced, peer.facts_replaced),
    )
    return (
        f"${ours.cost:.4f} vs {peer.name} ${peer.cost:.4f} ({ours.cost / peer.cost:.2f}x, target <= 1); {whole}; {old};"
        f" {replaced}"
    )


def main() -> None:
    global PRICE_S_IN, PRICE_S_OUT
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", default="500,4500", help="agent_session sizes in messages, comma-separated")
    parser.add_argument("--window", type=int, default=32_000, help="context window in tokens")
    parser.add_argument("--no-corpora", action="store_true", help="leave out the Claude Code sessions of the corpora")
    parser.add_argument("--peers", default=",".join(PEERS), help=f"libraries to compare ({', '.join(PEERS)})")
    parser.add_argument(
        "--old-tail",
        type=float,
        default=OLD_TAIL,
        help="share of the window whose newest messages the old ids/old facts leave out (0 to 1)",
    )
    parser.add_argument(
        "--price-summarizer",
        type=lambda v: tuple(float(x) for x in v.split(",")),
        default=(PRICE_S_IN, PRICE_S_OUT),
        metavar="IN,OUT",
        help=f"summarizer USD per million tokens in and out (default {PRICE_S_IN},{PRICE_S_OUT}: Nova Micro)",
    )
    args = parser.parse_args()
    names = [p for p in args.peers.split(",") if p]
    unknown = [p for p in names if p not in PEERS]
    if unknown:
        parser.error(f"unknown peer(s) {', '.join(unknown)}; choose from {', '.join(PEERS)}")
    sizes = [int(x) for x in args.sessions.split(",") if x]
    if not 0 <= args.old_tail <= 1:
        parser.error(f"--old-tail must be between 0 and 1, got {args.old_tail}")
    PRICE_S_IN, PRICE_S_OUT = args.price_summarizer
    print(
        f"prices per million tokens: input ${PRICE_INPUT}, cached ${PRICE_CACHED}; summarizer input ${PRICE_S_IN},"
        f" output ${PRICE_S_OUT} (a small model picked for the job, Nova Micro's list price by default; cost@main:"
        f" the summarizer at ${MAIN_S_IN} / ${MAIN_S_OUT}); one fake summarizer for all (every tenth line of its"
        " input)"
    )
    for work in workloads(sizes, args.window, not args.no_corpora):
        rows: list[Row] = []
        for peer in make_peers(work, names):
            if isinstance(peer, tuple):
                rows.append(Row(peer[0], error=peer[1]))
                continue
            rows.append(measure(work, peer, args.old_tail))
        print_rows(work, rows, args.old_tail)


if __name__ == "__main__":
    main()
