"""`CompactionStep`: one compaction of what the model sees, from its budget to the archive write.

The manager decides that a request must be compacted (`_policy.decide`) and holds the session lock; this step does
the work: the budget (`budgets`: ``reset_token_ratio`` of the window less what lies outside the messages and the
room kept for recall, the newest messages' floor under a cache-aware reset), the pipeline (`pipeline`: the configured
strategy through `CompactionSettings.compact`, then, when it could not do its work or left the history over the
window, the model-free last resorts), and the write: every removed original archived with its record and the new
session state (mapping included) in one transaction. What it returns (`Compacted`, `Unchanged`, `Failed`, `Lost`)
tells the manager what to write back and announce; it emits nothing and touches no session view.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..chain import message_depth
from ..errors import SummarizerError
from ..executor import CompactResult
from ..messages import Message
from ..store import Archive, SummaryRecord
from ..strategies import tail_need
from ..summarize import SummarizerUsage, reaching
from ..tokens import TokenCounter
from ._build import build_record, removed_messages
from ._compaction import CompactionSettings
from ._config import ManagerConfig
from ._depth import CompactionChoice
from ._events import SummarizationReason
from ._policy import SessionState
from ._profile import PhaseTimes
from ._session_view import Frame
from ._summarizers import META_ALLOWANCE_TOKENS, SleepFn, SummarizerChain, meta_header
from ._view import Cover, Fingerprints, View

__all__ = ["Compacted", "CompactionStep", "Failed", "Lost", "Outcome", "Unchanged"]

logger = logging.getLogger(__name__)

_SEPARATE_SYSTEM = frozenset({"anthropic", "gemini", "bedrock"})
"""Live formats whose system prompt is a separate request field, not a message of the list."""


@dataclass(frozen=True, slots=True)
class Compacted:
    """The compaction wrote its record: the archive holds the originals, the store the new state."""

    messages: tuple[Message, ...]
    """What the model sees after it (recall blocks aside)."""
    record: SummaryRecord
    state: SessionState
    """The state written, with its new version."""
    view: View
    """The new mapping of the caller's history onto `messages`."""
    tokens_after: int
    """`messages` with the system prompt and the reserve."""
    removed: int
    """Originals it moved to the archive."""
    chain: SummarizerChain
    errors: tuple[SummarizerError, ...]
    """Summarizer failures on the way (a later summarizer or a last resort did the work)."""


@dataclass(frozen=True, slots=True)
class Unchanged:
    """Nothing could be compacted, and no summarizer failed."""


@dataclass(frozen=True, slots=True)
class Failed:
    """The compaction failed: the history stays; `detail` and `kind` say why (`SummarizationFailedEvent`)."""

    detail: str
    kind: str
    error: SummarizerError | None = None
    usage: SummarizerUsage | None = None


@dataclass(frozen=True, slots=True)
class Lost:
    """Another process wrote the session's state meanwhile (the archive write's compare-and-set failed): nothing
    was written here, and what the other process wrote stands."""


Outcome = Compacted | Unchanged | Failed | Lost


@dataclass(frozen=True, slots=True)
class CompactionStep:
    """How one session compacts, fixed for the manager's life."""

    config: ManagerConfig
    choice: CompactionChoice
    settings: CompactionSettings
    window: int
    counter: TokenCounter
    provider: str
    archive: Archive
    session: str
    sleep: SleepFn

    def budgets(
        self, frame: Frame, reason: SummarizationReason, tokens: int, messages: Sequence[Message]
    ) -> tuple[int, int]:
        """(budget, hard limit) for the messages the model sees, with the system prompt and reserve taken off. A
        cache-aware reset below the configured one gives way to the newest ``preserve_recent`` of `messages`: the
        budget is at least what they need to stay verbatim (`tail_need`), up to the configured reset's budget."""
        cfg = self.config
        outside = frame.outside
        recall = int(cfg.recall_token_ratio * self.window)
        hard = max(1, self.window - outside)
        budget = int(cfg.reset_token_ratio * self.window) - outside - recall
        configured = int(self.choice.configured_reset * self.window) - outside - recall
        if budget < configured:
            need = tail_need(messages, cfg.preserve_recent, self.counter)
            budget = max(budget, min(configured, need))
        if reason in ("refresh", "manual"):
            budget = min(budget, int((tokens - outside) * (1 - cfg.summary_ratio)))
        return max(0, min(budget, hard)), hard

    async def pipeline(
        self, messages: Sequence[Message], budget: int, hard: int, format: str | None
    ) -> tuple[tuple[Message, ...], SummarizerChain, list[CompactResult]]:
        """The configured strategy, then, when it could not do its work or left the history over the window, the
        model-free last resorts (`AutoStrategy(summarize=False)`). `format` is the caller's (live) format."""
        settings = self.settings
        depth = max((message_depth(m) for m in messages), default=0)
        chain = SummarizerChain(
            settings.summarizers,
            self.counter,
            settings.summarizer_input_cap_tokens,
            self.sleep,
            header=meta_header(len(messages), self.counter.count_messages(messages), depth),
            timeout_s=settings.summarizer_timeout_seconds,
            model_tokens=settings.model_tokens_per_compaction,
        )
        role = settings.summary_role
        if role == "system" and format in _SEPARATE_SYSTEM:
            # These formats carry system text outside the message list, in the caller's own system field, which
            # the manager hands back untouched: a system-role record would never reach the model. It goes into
            # the list as the (default) user-role record instead.
            role = "user"

        async def run(history: Sequence[Message], *, fallback: bool) -> CompactResult:
            return await settings.compact(
                history,
                summarizer=None if fallback else chain,
                counter=self.counter,
                budget=budget,
                hard_limit=hard,
                provider=self.provider,
                fallback=fallback,
                summary_role=role,
                header_tokens=META_ALLOWANCE_TOKENS,
            )

        with reaching(chain.reach):  # what chunked summarization shows no summarizer (model coverage)
            first = await run(messages, fallback=False)
        results = [first]
        current = first.messages if first.changed else tuple(messages)
        size = first.tokens_after
        trigger = int(self.config.trigger_token_ratio * self.window)
        if size > hard or (first.errors and size > trigger):
            second = await run(current, fallback=True)
            results.append(second)
            if second.changed:
                current = second.messages
        return current, chain, results

    async def run(
        self,
        source: list[Message],
        covers: list[Cover],
        prints: Fingerprints,
        frame: Frame,
        reason: SummarizationReason,
        tokens_before: int,
        state: SessionState,
        format: str | None,
        profile: PhaseTimes | None,
    ) -> Outcome:
        """Compact `source` (what the model sees now; `covers` and `prints` map it onto the caller's history) and
        write the result with the state that follows `state`."""
        budget, hard = self.budgets(frame, reason, tokens_before, source)
        try:
            final, chain, results = await self.pipeline(source, budget, hard, format)
        except Exception as exc:  # a planner bug or an unusable history: fail open, say why
            if profile is not None:
                profile.lap("pipeline")
            # the failed event's one WARNING line carries the cause; the traceback is for debugging
            logger.debug("session=<%s> | compaction raised; history kept", self.session, exc_info=True)
            return Failed(f"{type(exc).__name__}: {exc}", "error")
        if profile is not None:
            profile.lap("pipeline")
        errors = tuple(e.error for r in results for e in r.errors)
        if self.config.abort_on_failure and (unanswered := chain.unanswered) is not None:
            # a summary no summarizer wrote is a failure to abort on, whatever the model-free path did around it:
            # the caller asked to hear it (a framework's adapter raising as the framework does), history untouched
            return Failed(str(unanswered), unanswered.kind, unanswered, chain.usage.total)
        if len(final) == len(source) and all(a is b for a, b in zip(final, source, strict=True)):
            if errors:
                last = errors[-1]
                return Failed(str(last), last.kind, last, chain.usage.total)
            return Unchanged()
        removal = removed_messages(source, final, state.archived)
        record = build_record(
            before=source,
            after=final,
            removal=removal,
            structured=chain.structured[-1] if chain.structured else None,
            session=self.session,
            parent_id=state.last_record_id,
            token_estimate=sum(self.counter.count_message(m) for _, m in removal.pairs),
        )
        record = replace(record, model_coverage=chain.model_coverage, model_free=chain.model_free_note())
        view = View.aligned(source, covers, final, prints)
        tokens_after = self.counter.count_messages(final) + frame.outside
        ratio_after = tokens_after / self.window
        n = len(final)
        new = replace(
            state,
            depth=max((message_depth(m) for m in final), default=0),
            last_record_id=record.id,
            armed=ratio_after < self.config.reset_token_ratio,
            count_after=n,
            summarized_at=n,
            last_ratio=ratio_after,
            archived=state.archived + len(removal.pairs),
            summarizations=state.summarizations + 1,
            view=view.to_data(),
            recall=(),
        )
        if profile is not None:
            profile.lap("record")
        try:
            ok = self.archive.archive_and_record(
                self.session, removal.pairs, record, expected_version=state.version, new_state=new.to_data()
            )
        except Exception as exc:
            if profile is not None:
                profile.lap("archive")
            logger.exception("session=<%s> | archive write failed; history kept", self.session)
            return Failed(f"archiving failed: {exc}", "archive")
        if profile is not None:
            profile.lap("archive")
        if not ok:
            return Lost()
        written = replace(new, version=state.version + 1)
        return Compacted(final, record, written, view, tokens_after, len(removal.pairs), chain, errors)
