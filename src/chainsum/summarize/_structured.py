"""Structured summaries: a schema-validated record instead of free text.

`StructuredSummary` is a pydantic model because it sits at an edge: its JSON schema is what an LLM is asked to
fill, and model output is untrusted JSON that must be validated. Lists are capped; a model that writes too many
items has them cut (oldest kept first, as written) rather than failing the whole compaction, because an over-long
list is a style problem, not a wrong answer. Output that is not JSON or does not validate is a
`SummarizerError(kind="invalid")` naming the field.

`ExtractiveStructuredSummarizer` derives the record from the extractive summarizer, so structured summaries work
with no model at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Protocol

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from ..errors import SummarizerError
from ._extractive import ExtractiveSummarizer, Item
from ._protocol import SummarizerLike, call_summarizer

__all__ = [
    "MAX_FACET_ITEMS",
    "MAX_KEY_POINTS",
    "ExtractiveStructuredSummarizer",
    "StructuredSummarizer",
    "StructuredSummary",
    "parse_structured_summary",
    "structured_instructions",
    "structured_summarizer",
]

MAX_KEY_POINTS = 30
MAX_FACET_ITEMS = 50
MAX_ITEM_CHARS = 2000
_FENCE = re.compile(r"^```[a-zA-Z]*\n(.*)\n```$", re.DOTALL)


def _capped(limit: int) -> Callable[[object], object]:
    def cap(value: object) -> object:
        if isinstance(value, list | tuple):
            return [item for item in value if not (isinstance(item, str) and not item.strip())][:limit]  # pyright: ignore[reportUnknownVariableType]
        return value

    return cap


_Entry = Annotated[str, Field(min_length=1, max_length=MAX_ITEM_CHARS)]
# Field before BeforeValidator: the other order makes pydantic write "maxLength" instead of "maxItems" in the schema.
_KeyPoints = Annotated[tuple[_Entry, ...], Field(max_length=MAX_KEY_POINTS), BeforeValidator(_capped(MAX_KEY_POINTS))]
_Facet = Annotated[tuple[_Entry, ...], Field(max_length=MAX_FACET_ITEMS), BeforeValidator(_capped(MAX_FACET_ITEMS))]


class StructuredSummary(BaseModel):
    """A summary as a record: a narrative plus capped lists of what the rest of the work needs."""

    model_config = ConfigDict(frozen=True, extra="ignore", str_strip_whitespace=True, use_attribute_docstrings=True)

    narrative: str = Field(min_length=1, max_length=20_000)
    """What happened, in a few sentences."""
    key_points: _KeyPoints = ()
    """The facts worth keeping, most important first (at most 30)."""
    decisions: _Facet = ()
    """Decisions and conclusions, with their reasons."""
    action_items: _Facet = ()
    """What is still to do."""
    unresolved_questions: _Facet = ()
    """Questions asked and not answered."""
    entities: _Facet = ()
    """Identifiers verbatim: paths, URLs, names, ids, versions, numbers with units."""

    def to_text(self) -> str:
        """Plain text for a history message (the sections of the extractive format)."""
        lines = [self.narrative]
        facets = (
            ("Key points:", self.key_points),
            ("Decisions and conclusions:", self.decisions),
            ("Action items:", self.action_items),
            ("Unresolved questions:", self.unresolved_questions),
            ("Identifiers:", self.entities),
        )
        for title, items in facets:
            if items:
                lines += ["", title, *("- " + item for item in items)]
        return "\n".join(lines)


class StructuredSummarizer(Protocol):
    """An async callable from a rendered transcript to a validated `StructuredSummary`."""

    def __call__(self, transcript: str, /) -> Awaitable[StructuredSummary]: ...


def structured_instructions() -> str:
    """What to append to a transcript to ask a text model for the record: the JSON schema and the rules."""
    schema = json.dumps(StructuredSummary.model_json_schema(), sort_keys=True, separators=(",", ":"))
    return (
        "\n<output_format>\nAnswer with one JSON object and nothing else, matching this JSON schema: "
        + schema
        + "\nPut identifiers (paths, URLs, names, ids, versions, numbers with units) in entities verbatim.\n"
        "</output_format>\n"
    )


def _json_text(text: str) -> str:
    text = text.strip()
    fenced = _FENCE.match(text)
    if fenced:
        return fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else text


def parse_structured_summary(text: str) -> StructuredSummary:
    """Validate a model's JSON answer (a code fence or prose around the object is tolerated).

    Raises `SummarizerError(kind="invalid")` saying what is wrong and where (``at key_points[3]: ...``).
    """
    if not text.strip():
        raise SummarizerError("returned an empty structured summary", kind="empty")
    try:
        data = json.loads(_json_text(text))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise SummarizerError(f"structured summary is not JSON: {exc}", kind="invalid") from exc
    if not isinstance(data, dict):
        raise SummarizerError(f"structured summary is a JSON {type(data).__name__}, not an object", kind="invalid")
    try:
        return StructuredSummary.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]).lstrip(".")
        detail = f"at {where}: {first['msg']}" if where else first["msg"]
        raise SummarizerError(
            f"structured summary does not validate ({exc.error_count()} error(s)); {detail}", kind="invalid"
        ) from exc


@dataclass(frozen=True, slots=True)
class _TextBacked:
    summarizer: SummarizerLike

    async def __call__(self, transcript: str) -> StructuredSummary:
        return parse_structured_summary(await call_summarizer(self.summarizer, transcript + structured_instructions()))


def structured_summarizer(summarizer: SummarizerLike) -> StructuredSummarizer:
    """A structured summarizer from a text one (an LLM): the schema is appended after the transcript's closing
    marker, the answer validated."""
    return _TextBacked(summarizer)


def _texts(items: tuple[Item, ...], limit: int) -> tuple[str, ...]:
    return tuple(item.text for item in items[:limit])


@dataclass(frozen=True, slots=True)
class ExtractiveStructuredSummarizer:
    """The record from the extractive summarizer: no model, deterministic, within the same budget.

    Without a model it cannot tell which questions were answered: `unresolved_questions` holds the user's
    questions (requests ending in "?"), `action_items` the user's other requests, latest last. An agent's commands
    (with how they ended) are key points beside the decisions and errors; its files come first in `entities`."""

    extractive: ExtractiveSummarizer = field(default_factory=lambda: ExtractiveSummarizer(ratio=1.0))
    """No length ratio by default: the record's own list caps bound it, and it does not replace the span."""
    local: bool = field(default=True, init=False)
    """Runs here, deterministically, with no model, as `ExtractiveSummarizer` does: a chain of a model and this one
    bounds what the model reads per compaction (``model_tokens_per_compaction``) and hands this one the rest, and a
    dry run runs it (`chainsum.executor.compact`; `call_summarizer` takes its record's text form). Without the
    flag a chain [model, this] let the model read everything, and a dry run showed a stand-in summary."""

    async def __call__(self, transcript: str) -> StructuredSummary:
        return self.summarize_text(transcript)

    def summarize_text(self, transcript: str) -> StructuredSummary:
        extraction = self.extractive.extract(transcript)
        chosen = self.extractive.select(extraction)

        def kept(name: str) -> tuple[Item, ...]:
            for section, (items, _) in chosen.items():
                if section == name:
                    return tuple(items)
            return ()

        requests, decisions, errors = kept("requests"), kept("decisions"), kept("errors")
        actions, files = kept("actions"), kept("files")
        questions = tuple(i for i in requests if i.text.rstrip().endswith("?"))
        asks = tuple(i for i in requests if i not in questions)
        narrative = f"Extractive summary of {extraction.messages} message(s)"
        if asks:
            narrative += f"; the latest request: {asks[-1].text}"
        if decisions:
            narrative += f"; the latest conclusion: {decisions[-1].text}"
        # an agent's commands with their outcome are key points too ("$ pytest -q (exit 1)"), and the files it read
        # and wrote the first entities
        key = sorted([*decisions, *errors, *actions], key=lambda i: (i.count < 2, -i.last, i.first))
        return StructuredSummary(
            narrative=narrative + ".",
            key_points=_texts(tuple(key), MAX_KEY_POINTS),
            decisions=_texts(decisions, MAX_FACET_ITEMS),
            action_items=_texts(asks[-MAX_FACET_ITEMS:], MAX_FACET_ITEMS),
            unresolved_questions=_texts(questions[-MAX_FACET_ITEMS:], MAX_FACET_ITEMS),
            entities=_texts((*files, *kept("identifiers")), MAX_FACET_ITEMS),
        )
