"""The embedded default summarizer: extractive, deterministic, no model, no network, linear time.

It reads the transcript `render_transcript` wrote (parsing its own blocks back) and keeps what model summaries
most often lose. Users of comparable tools measured it: summaries keep most decisions but drop almost every file
path, command and measured number the decisions rest on. So this summarizer is a state snapshot of exactly that:

- what the user asked for (each request, shortened, with the sentences that state facts: `_chat`),
- the assistant's decisions and conclusions (sentences with decision cues; else the last sentence of a message),
- the actions taken: commands run with their outcome (exit status), searches, other tool calls (`_agent`),
- the files read and written (`_agent`), named relative to the directory they share, and the code an agent wrote
  (the first lines each edit added),
- errors seen (the error lines of failed commands and flagged tool results; errors people and assistants name),
- every identifier it can find (`_identifiers`): paths, URLs, emails, names, ids, hashes, codes, versions, numbers;
  never transcript filler nor a tool-call id (`_filler`).

The modules: `_identifiers` (patterns and scanning), `_items` (items and their collector), `_chat` and `_agent`
(the facts of a chat and of an agent span), `_extract` (the pass over a transcript), `_render` (ranking and text);
this one holds the budget: how the room a summary is given is shared between the sections.

Over budget, the identifiers come first in a chat (`ExtractiveSummarizer.identifier_share`), as a prefix of their
ranking, so a longer summary lists every identifier a shorter one did; in an agent's span the work comes first
(`agent_identifier_share`, `agent_shares`: the requests, the files and every command before the rest): a list of
names says less than which files were changed and which command failed with what error. Narrative sections are
printed in conversation order. A length asked for is measured with the default counter. Linear time:
`Extraction.scanned` counts the characters matched over, which the tests use to check linearity without timing
anything.

Consolidation (merging partial summaries) works too: a ``summary`` block written in this package's own format is
read section by section, so items survive every level of map-reduce.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..messages import Message
from ._extract import COUNTER, extract
from ._items import SECTIONS, TITLES, Extraction, Item, Section, key_identifiers
from ._render import (
    LEFT_OUT_CHARS,
    MIN_SHORTENED,
    PROSE_BASE,
    all_ranked,
    cost,
    header,
    identifier_prefix,
    ladder,
    ladder_steps,
    render,
)
from ._transcript import TranscriptCase, parse_transcript_target, render_transcript

__all__ = ["Extraction", "ExtractiveSummarizer", "Item", "Section", "key_identifiers"]

_SHARES: dict[Section, float] = {
    "requests": 0.2,
    "decisions": 0.27,
    "actions": 0.13,
    "files": 0.13,
    "changes": 0.05,
    "errors": 0.13,
}
_PRIORITY: tuple[Section, ...] = ("requests", "errors", "actions", "files", "decisions", "changes")
"""Which section a small room goes to first: what was asked, what went wrong, what was done, then the prose."""
_AGENT_SHARES: dict[Section, float] = {
    "requests": 0.3,
    "decisions": 0.1,
    "actions": 0.2,
    "files": 0.2,
    "changes": 0.25,
    "errors": 0.2,
}
"""An agent's code written (`_agent`: the lines its edits added) is what its summary most often lacks: Claude Code's
own compaction summaries quote it ("Added `attribute :state, :atom`"), and a record that names only which files
changed kept 0.5 of those summaries' names at 8K tokens (``bench/bench_reference.py``)."""


@dataclass(frozen=True, slots=True)
class ExtractiveSummarizer:
    """The default summarizer: ``await ExtractiveSummarizer()(transcript)``, or `summarize_messages` when sync.

    `max_chars` bounds the output; `max_tokens`, when given, bounds it too at about 4 characters a token.
    """

    max_chars: int = 4000
    max_tokens: int | None = None
    ratio: float = 0.3
    """The summary is at most this share of the content it replaces (never below `min_chars`), so a summary of a
    short span cannot come out longer than the span: compaction must save space. 1.0 turns the limit off."""
    asked_ratio: float = 0.9
    """When the transcript asks for a length, the summary may take up to that length or this share of the content,
    whichever is less: the caller planned the room (``auto`` fills the budget with it), and a summary held to
    `ratio` of a short span left most of that room empty and listed fewer of the span's identifiers than a
    smaller budget's summary of a longer span (``bench/bench_budget.py``)."""
    min_chars: int = 300
    max_item_chars: int = 240
    """Longer requests, sentences and errors are shortened to this (identifiers are never cut below it)."""
    identifier_share: float = 0.5
    """Share of the budget the identifiers get at least (all the others do not need, when more): paths, ids, dates
    and codes are what a conversation comes back to, and their room grows with the budget whatever the prose takes
    (`_fit`, `select`)."""
    shares: dict[Section, float] = field(default_factory=lambda: dict(_SHARES), hash=False)
    agent_identifier_share: float = 0.15
    """`identifier_share` for an agent's span (`Extraction.agent`): its paths and commands are listed as files and
    actions already, and the rest of its identifiers are mostly names read off tool output."""
    agent_shares: dict[Section, float] = field(default_factory=lambda: dict(_AGENT_SHARES), hash=False)
    """`shares` for an agent's span: its requests, commands, files and errors before the assistant's prose."""
    """How the rest of the budget is split between the other sections; what a section does not use goes to the
    others."""
    local: bool = field(default=True, init=False)
    """Runs here, deterministically, with no model: a dry run may run it (`chainsum.executor.compact`)."""

    def __post_init__(self) -> None:
        if self.max_chars < 200 or (self.max_tokens is not None and self.max_tokens < 50):
            raise ValueError("budget too small for a summary: max_chars >= 200 and max_tokens >= 50")
        if not 0.0 < self.ratio <= 1.0 or not 0.0 < self.asked_ratio <= 1.0 or self.min_chars < 100:
            raise ValueError("ratio and asked_ratio must be in (0, 1] and min_chars >= 100")
        if not 0.0 <= self.identifier_share <= 1.0 or not 0.0 <= self.agent_identifier_share <= 1.0:
            raise ValueError("identifier_share and agent_identifier_share must be in [0, 1]")

    def _shares(self, extraction: Extraction) -> Mapping[Section, float]:
        return self.agent_shares if extraction.agent else self.shares

    def _id_share(self, extraction: Extraction) -> float:
        return self.agent_identifier_share if extraction.agent else self.identifier_share

    async def __call__(self, transcript: str) -> str:
        return self.summarize_text(transcript)

    def summarize_messages(
        self, messages: Sequence[Message], case: TranscriptCase = "context", context: Sequence[Message] = ()
    ) -> str:
        """Render `messages` as a transcript and summarize it, synchronously."""
        return self.summarize_text(render_transcript(messages, case, context))

    async def summarize_messages_async(
        self, messages: Sequence[Message], case: TranscriptCase = "context", context: Sequence[Message] = ()
    ) -> str:
        await asyncio.sleep(0)
        return self.summarize_messages(messages, case, context)

    def extract(self, transcript: str) -> Extraction:
        """Parse the transcript's blocks and collect items per section (no budget applied)."""
        return extract(transcript, self.max_item_chars)

    def summarize_text(self, transcript: str) -> str:
        """The summary of a transcript (any text works; a chainsum transcript works best). A transcript asking for
        a length (``target_tokens``) gets at most about that many tokens (3.5 characters a token)."""
        extraction = self.extract(transcript)
        target = parse_transcript_target(transcript)
        if target is None:
            return self.format(extraction)
        return self._fit(extraction, target)

    def _fit(self, extraction: Extraction, target: int) -> str:
        """The summary asked for `target` tokens (by the default counter's estimate: characters a token differ,
        3.5 for prose and fewer for a list of ids, dates and codes, so lengths are measured, not assumed).

        The identifiers come first, in tokens: `identifier_share` of what the header leaves, or all that the other
        sections' items do not need, as a prefix of their ranking. So a larger target lists all that a smaller one
        did, whatever the prose around them does; a summary of a shorter span (a larger budget keeps more of the
        conversation verbatim) lists its identifiers at least as far down. The other sections then take the longest
        of one fixed ladder of character rooms (4 % apart) that fits beside them."""
        count = COUNTER.count_text
        if extraction.read_tokens > 0 and self.ratio < 1.0:
            # at most `asked_ratio` of what it read, in tokens: a consolidation asked for more than its partial
            # summaries hold came out as long as they were, and the manager rejects a summary no smaller than its
            # input
            target = min(target, max(self.min_chars // 4, int(extraction.read_tokens * self.asked_ratio)))
        ranked = all_ranked(extraction)
        shares = self._shares(extraction)
        present: list[Section] = [n for n in SECTIONS if ranked[n]]
        others: list[Section] = [n for n in present if n != "identifiers"]
        cap = self.budget_for(extraction, limit=max(target * 6, self.min_chars))  # at most asked_ratio of the content
        nothing: dict[Section, tuple[Sequence[Item], int]] = {n: ((), len(ranked[n])) for n in present}
        fixed = count(render(extraction, nothing))
        room = max(0, target - fixed)
        needs = _needs(ranked, others)  # the same for every room tried below
        work = extraction.agent
        prose_need = (
            count(render(extraction, {**nothing, **self._prose(ranked, others, 10**9, shares, needs, work_first=work)}))
            - fixed
        )
        ids_tokens = min(room, max(int(room * self._id_share(extraction)), room - prose_need))
        listed = identifier_prefix(ranked["identifiers"], 10**9)

        def with_ids(n: int) -> dict[Section, tuple[Sequence[Item], int]]:
            return {**nothing, "identifiers": (listed[:n], len(ranked["identifiers"]) - n)}

        low, high = 0, len(listed)  # the most identifiers within their tokens: a prefix, found by bisection
        while low < high:
            middle = (low + high + 1) // 2
            text = render(extraction, with_ids(middle))
            if count(text) - fixed <= ids_tokens and len(text) <= cap:
                low = middle
            else:
                high = middle - 1
        chosen = with_ids(low)
        best = render(extraction, chosen)
        if not others:
            return best if "\n- " in best else self._one_item(extraction, ranked, target, cap, best)
        top = ladder_steps(PROSE_BASE, cap)
        low, high = -1, top  # the longest prose that fits: the rungs up to `low` fit, those above `high` do not
        texts: dict[int, str] = {}
        while low < high:
            middle = (low + high + 1) // 2
            texts[middle] = render(
                extraction,
                {**chosen, **self._prose(ranked, others, ladder(PROSE_BASE, middle), shares, needs, work_first=work)},
            )
            if count(texts[middle]) <= target and len(texts[middle]) <= cap:
                low = middle
            else:
                high = middle - 1
        result = texts[low] if low >= 0 else best
        return result if "\n- " in result else self._one_item(extraction, ranked, target, cap, result)

    @staticmethod
    def _one_item(
        extraction: Extraction, ranked: Mapping[Section, Sequence[Item]], target: int, cap: int, empty: str
    ) -> str:
        """A summary that lists nothing says nothing ("State snapshot of 4 message(s). (5 more items left out)"):
        the room a tight target leaves beside the header goes to the first item of the first section that has one
        (the requests, then the errors, the actions, the files, the decisions, the identifiers), cut to fit, with
        the line counting the rest when that fits too; the next section's where it does not (a long title). `empty`
        when not even a short item fits."""
        order: tuple[Section, ...] = ("requests", "errors", "actions", "files", "decisions", "identifiers")
        for name in order:
            text = ExtractiveSummarizer._first_of(extraction, ranked, name, target, cap) if ranked[name] else ""
            if text:
                return text
        return empty

    @staticmethod
    def _first_of(
        extraction: Extraction, ranked: Mapping[Section, Sequence[Item]], name: Section, target: int, cap: int
    ) -> str:
        """The summary listing only the first item of section `name` (`_one_item`), cut to fit; "" where it does
        not."""
        items = ranked[name]
        # the one that states most (a chat's first message is rarely what it comes back to; weights count facts)
        item = max(items, key=lambda i: i.weight) if name == "requests" else items[0]
        left = sum(len(ranked[n]) for n in SECTIONS) - 1
        for note in (left, 0):
            # the longest cut that fits, by bisection; an item shorter than the shortest cut is tried whole (a
            # generated agent span's only action, "$ pytest -q (done)", was never tried: the record said nothing)
            low, high = min(MIN_SHORTENED // 2, len(item.text)) - 1, len(item.text)
            text = ""
            while low < high:
                middle = (low + high + 1) // 2
                cut = item.text if middle >= len(item.text) else item.text[: middle - 3].rstrip() + "..."
                only: dict[Section, tuple[Sequence[Item], int]] = {name: ([replace(item, text=cut, count=1)], note)}
                candidate = render(extraction, only)
                if COUNTER.count_text(candidate) <= target and len(candidate) <= cap:
                    low, text = middle, candidate
                else:
                    high = middle - 1
            if text:
                return text
        return ""

    @property
    def budget(self) -> int:
        if self.max_tokens is None:
            return self.max_chars
        return min(self.max_chars, self.max_tokens * 4)

    def budget_for(self, extraction: Extraction, *, limit: int | None = None) -> int:
        """The budget for this input: `budget` (or `limit`, a length the caller asked for, which may be larger),
        narrowed to `ratio` of the content (`asked_ratio` when a length was asked for) plus the earlier summaries
        being consolidated, but at least `min_chars`."""
        budget = self.budget if limit is None else limit
        if extraction.content_chars <= 0 or self.ratio >= 1.0:
            return budget
        share = self.ratio if limit is None else max(self.ratio, self.asked_ratio)
        # the earlier summaries being folded in count whole: narrowed to a share of the new messages alone, a
        # record folding 245 messages' summaries with 6 new ones came out at 200 tokens, "(32 more items left out)"
        return min(budget, max(self.min_chars, int(extraction.content_chars * share) + extraction.summary_chars))

    def select(self, extraction: Extraction, *, limit: int | None = None) -> dict[Section, tuple[list[Item], int]]:
        """The items each section keeps within the budget in characters (no length asked for; `_fit` measures one
        in tokens), and how many it leaves out.

        Every section keeps a prefix of its ranking that grows with the budget, so a longer summary of the same span
        never lists less: the identifiers get `identifier_share` of the budget, or all that the other sections do not
        need, and their list ends at the first that does not fit; the other sections share the rest (`_prose`)."""
        ranked = all_ranked(extraction)
        # the header line (its real length) and one "(n more items left out for length)" line
        budget = self.budget_for(extraction, limit=limit) - len(header(extraction)) - 2 - LEFT_OUT_CHARS
        budget -= len(extraction.root) + 25 if extraction.root else 0  # the line naming the files' directory
        present: list[Section] = [n for n in SECTIONS if ranked[n]]
        needs = _needs(ranked, present)
        others: list[Section] = [n for n in present if n != "identifiers"]
        ids_room = 0
        if "identifiers" in needs:
            wanted = max(int(budget * self._id_share(extraction)), budget - sum(needs[n] for n in others))
            ids_room = max(0, min(needs["identifiers"], wanted))
        chosen: dict[Section, tuple[list[Item], int]] = {}
        if "identifiers" in needs:
            keep = identifier_prefix(ranked["identifiers"], ids_room - len(TITLES["identifiers"]) - 2)
            chosen["identifiers"] = (keep, len(ranked["identifiers"]) - len(keep))
        chosen.update(
            self._prose(ranked, others, budget - ids_room, self._shares(extraction), work_first=extraction.agent)
        )
        return {name: chosen[name] for name in present}

    def _prose(
        self,
        ranked: Mapping[Section, Sequence[Item]],
        others: Sequence[Section],
        room: int,
        shares: Mapping[Section, float],
        needs: Mapping[Section, int] | None = None,
        *,
        work_first: bool = False,
    ) -> dict[Section, tuple[list[Item], int]]:
        """The items of the sections other than the identifiers within `room` characters: the requests first (what
        they need, up to half the room: a summary that drops what the user asked for or stated keeps the least
        useful part), then water-filling by `shares` (small sections take what they need), each a prefix of its
        ranking whose next item is cut to the room left, so a section grows smoothly as the room does. `needs`:
        `_needs(ranked, others)`, when the caller tries several rooms.

        `work_first` (an agent's span): after the requests, the files take what they need up to a quarter of the
        room left, then the actions up to a third of what remains (more where every action at its shortest needs
        it), each command cut to its part with its outcome kept, and only then do the other sections share the
        rest: a record of an agent's span names which files it touched and every command it ran and how each ended
        before any decision or name (a record of 8 messages that said only one clipped command line had left its
        room to a name and a sentence)."""
        if needs is None:
            needs = _needs(ranked, others)
        left = room
        allowance: dict[Section, int] = {}
        rest = list(others)
        if "requests" in needs:  # what the user asked for first: up to half the room, the others share the rest
            allowance["requests"] = min(needs["requests"], max(0, room // 2))
            left -= allowance["requests"]
            rest.remove("requests")
        # a room too small for one request keeps what its shortest cut needs for it (the pooling below gives it)
        reserve = 0
        if "requests" in needs:
            first = len(TITLES["requests"]) + 2 + min(cost(ranked["requests"][0]), 8 + MIN_SHORTENED)
            reserve = max(0, min(needs["requests"], first) - allowance["requests"])
        work = max(0, left - reserve)
        if work_first and "files" in needs:  # which files were read and written: short, and what work returns to
            allowance["files"] = min(needs["files"], work // 4)
            left, work = left - allowance["files"], work - allowance["files"]
            rest.remove("files")
        if work_first and "actions" in needs:
            # a third of what is left, or as much as listing every action at its shortest needs
            shortest = len(TITLES["actions"]) + 2 + len(ranked["actions"]) * (MIN_SHORTENED + 4)
            allowance["actions"] = min(needs["actions"], max(work // 3, min(work, shortest)))
            left -= allowance["actions"]
            rest.remove("actions")
        share_left = sum(shares.get(n, 0.0) for n in rest)
        for name in sorted(rest, key=lambda n: (needs[n], SECTIONS.index(n))):  # water-filling
            fair = int(left * (shares.get(name, 0.0) / share_left)) if share_left > 0 else 0
            allowance[name] = min(needs[name], max(fair, 0))
            left -= allowance[name]
            share_left -= shares.get(name, 0.0)
        # a share too small for one item says nothing ("Errors:" and no error): such shares are pooled and given,
        # in the order of what matters most, to sections that one item then fits
        viable = {n: min(needs[n], len(TITLES[n]) + 2 + min(cost(ranked[n][0]), 8 + MIN_SHORTENED)) for n in others}
        pool = left
        for name in others:
            if allowance[name] < viable[name]:
                pool += allowance[name]
                allowance[name] = 0
        for name in _PRIORITY:
            if name in allowance and allowance[name] == 0 and viable[name] <= pool:
                allowance[name] = viable[name]
                pool -= viable[name]
        chosen: dict[Section, tuple[list[Item], int]] = {}
        for name in others:
            keep: list[Item] = []
            used = len(TITLES[name]) + 2
            items = ranked[name]
            if name == "requests" and allowance[name] < needs[name] and len(items) > 1:
                # several requests in too little room: each cut to its part ("did you push?" after a long task
                # notification is as much the request as the task)
                part = max(2 * MIN_SHORTENED, (allowance[name] - used) // len(items) - 8)
                items = [
                    i if len(i.text) <= part else replace(i, text=i.text[: part - 3].rstrip() + "...") for i in items
                ]
            elif name in ("actions", "errors") and allowance[name] < needs[name] and len(items) > 1:
                # an agent's commands and errors in too little room: each cut to its part, what says how it ended
                # kept (a command's outcome, an error's line after the command it names)
                least = 2 * MIN_SHORTENED + (_LABEL_CHARS + 3 if name == "errors" else 0)
                if work_first and name == "actions":
                    least = MIN_SHORTENED  # every command named, however short its part: "$ mix test te... (exit 1)"
                part = max(least, (allowance[name] - used) // len(items) - 8)
                items = [i if len(i.text) <= part else replace(i, text=_shortened(i.text, part)) for i in items]
            for item in items:
                if used + cost(item) > allowance[name]:
                    room_left = allowance[name] - used - 8
                    if room_left >= MIN_SHORTENED:  # the next item, cut to the room left: it grows with the room
                        cut = (
                            _shortened(item.text, room_left)
                            if name in ("actions", "errors")
                            else item.text[: room_left - 3].rstrip() + "..."
                        )
                        keep.append(replace(item, text=cut))
                    break
                keep.append(item)
                used += cost(item)
            keep.sort(key=lambda i: (i.first, i.last))
            chosen[name] = (keep, len(ranked[name]) - len(keep))
        return chosen

    def format(self, extraction: Extraction, *, limit: int | None = None) -> str:
        """Plain text with one section per kind of item, within the budget (and within `limit` characters)."""
        text = render(extraction, self.select(extraction, limit=limit))
        budget = self.budget_for(extraction, limit=limit)
        return text if len(text) <= budget else text[: budget - 3] + "..."


def _shortened(text: str, limit: int) -> str:
    """An action or error item cut to about `limit` characters with what says how it ended kept: a command's
    outcome at its end (``$ mix test ... (exit 1)``), an error's line after the command it names, whose name is cut
    first (``(mix test ...) ** (RuntimeError) ...``)."""
    if text.startswith("(") and ") " in text:  # an error: "(label) line"
        label, line = text[1:].split(") ", 1)
        label = label if len(label) <= _LABEL_CHARS else label[: _LABEL_CHARS - 3].rstrip() + "..."
        text = f"({label}) {line}"
        return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."
    at = text.rfind(" (")
    if text.endswith(")") and 0 < at and len(text) - at <= limit // 2:  # a command and its outcome
        head, outcome = text[:at], text[at:]
        return head[: limit - len(outcome) - 3].rstrip() + "..." + outcome
    return text[: limit - 3].rstrip() + "..."


_LABEL_CHARS = 30
"""What of the command an error item names is kept when the item is cut: the error line says more."""


def _needs(ranked: Mapping[Section, Sequence[Item]], names: Sequence[Section]) -> dict[Section, int]:
    """Characters each of the sections `names` takes with every item listed (its title and items)."""
    return {n: sum(map(cost, ranked[n])) + len(TITLES[n]) + 2 for n in names}
