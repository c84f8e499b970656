"""What `compact` returns: the history, the counts, and an honest account of what fell short."""

from __future__ import annotations

from dataclasses import dataclass

from ..chain import ChainRepair
from ..errors import SummarizerError
from ..messages import Message
from ..rules import Problem, RepairAction
from ..strategies import Plan, Step

__all__ = ["CompactResult", "StepError"]


@dataclass(frozen=True, slots=True)
class StepError:
    """A summarizing step that failed; its original messages were kept."""

    round: int
    step: Step
    error: SummarizerError

    def __str__(self) -> str:
        return f"round {self.round}: {self.step.kind} ({self.step.reason}): {self.error}"


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactResult:
    """What `compact` did. For a dry run, `messages` is the input and the counts are what would happen.

    Three things can fall short, and each is said here rather than hidden: the budget (`fits`), the provider's
    rules (`valid`, `problems`) and the summarizer (`errors`). `ok` is all three; the CLI exits 1 otherwise."""

    messages: tuple[Message, ...]
    """The history to send on (the input itself when nothing was gained)."""
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    messages_summarized: int
    """Messages replaced by summaries or moved to the archive (masking and clipping edit in place: not counted)."""
    summarizer_calls: int
    summarizer_input_tokens: int
    errors: tuple[StepError, ...]
    """Every failed summarizing step, in order (each kept its original messages)."""
    rounds: int
    """Rounds in which a non-empty plan was applied."""
    plans: tuple[Plan, ...]
    """Every plan the strategy returned, the final empty one included."""
    repairs: tuple[ChainRepair, ...]
    """Structural repairs made before planning (`Chain.build(repair=True)`): messages dropped or fixed, by index in
    the input."""
    provider_repairs: tuple[RepairAction, ...]
    """What the final `chainsum.rules.repair` pass changed for the provider."""
    problems: tuple[Problem, ...]
    """What `chainsum.rules.validate` still reports on `messages` (empty when valid)."""
    seconds: float
    strategy: str
    provider: str
    budget: int | None = None
    """The budget asked for (None: the strategy's own target)."""
    dry_run: bool = False
    model_coverage: float | None = None
    """Of the conversation the summaries replaced, the share the summarizer read, when it calls a model (excerpts
    of a span longer than the calls allowed count as not read); None for a model-free summarizer (``local = True``:
    the extractive one), a dry run, or when nothing was summarized."""

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def fits(self) -> bool:
        """The result is within the budget (always, without one)."""
        return self.budget is None or self.tokens_after <= self.budget

    @property
    def ok(self) -> bool:
        """Fits, valid, and no summarizer failed."""
        return self.fits and self.valid and not self.errors

    @property
    def changed(self) -> bool:
        return not self.dry_run and self.tokens_after < self.tokens_before

    @property
    def changes(self) -> tuple[str, ...]:
        """Every message dropped or changed other than by compaction itself (repairs), one line each, by index."""
        return tuple(str(r) for r in self.repairs) + tuple(str(a) for a in self.provider_repairs)

    def report(self) -> dict[str, object]:
        """The CLI's JSON report."""
        return {
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "budget": self.budget,
            "fits": self.fits,
            "messages_before": self.messages_before,
            "messages_after": self.messages_after,
            "messages_summarized": self.messages_summarized,
            "summarizer_calls": self.summarizer_calls,
            "summarizer_input_tokens": self.summarizer_input_tokens,
            "model_coverage": None if self.model_coverage is None else round(self.model_coverage, 6),
            "seconds": round(self.seconds, 3),
            "strategy": self.strategy,
            "provider": self.provider,
            "valid": self.valid,
            "problems": [str(p) for p in self.problems],
            "errors": [str(e) for e in self.errors],
            "changes": list(self.changes),
        }
