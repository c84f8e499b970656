"""`budget_floor`: what no compaction can take out of a history, so whether a budget can be reached at all.

A budget is *reachable* when the system prompt, the current turn and the smallest summary record fit it: the user's
system messages are never summarized (DESIGN invariant 2), the newest user message and what follows it never leave
the context (invariants 3 and 8), and whatever older is summarized stands for itself as a record beside them. The
record's share is the documented allowance: its framing, one block and the shortest summary asked for at that
budget (`chainsum.strategies.least_record_tokens`, 105-165 tokens), and the margin a plan leaves for its
estimates (5 tokens and a hundredth of the budget). ``chainsum compact`` names the part that alone is over when a
budget is not reached; its tests hold every reachable budget of the corpora and of generated histories to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..chain import current_turn_start, is_summary_system, newest_turn_start
from ..messages import Message
from ..strategies import estimate_margin, least_record_tokens
from ..tokens import TokenCounter

__all__ = ["BudgetFloor", "budget_floor"]


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetFloor:
    """The parts of a history no compaction removes, in tokens, at one budget."""

    budget: int
    system: int
    """The user's system messages before the current turn (verbatim, wherever they are)."""
    turn: int
    """The current turn: the newest user message and everything after it (`chain.newest_turn_start`; when the
    history ends in the assistant's own steps, the newest user message before them and the last body pair)."""
    record: int
    """The allowance for the summary record of everything older, and the plan's margin."""

    @property
    def total(self) -> int:
        return self.system + self.turn + self.record

    @property
    def reachable(self) -> bool:
        """The system prompt, the current turn and the allowance fit the budget."""
        return self.total <= self.budget

    def shortfall(self) -> str:
        """Why the budget cannot be reached, naming the part that alone is over (the system prompt, the current
        turn, the two together, or the record's allowance beside them); empty when it can."""
        b = self.budget
        if self.reachable:
            return ""
        if self.system > b:
            return f"the system prompt alone is {self.system} tokens, over the budget of {b}"
        if self.turn > b:
            return f"the current turn alone (the newest user message and what follows it) is {self.turn} tokens"
        if self.system + self.turn > b:
            return (
                f"the system prompt ({self.system} tokens) and the current turn ({self.turn} tokens) together are "
                f"over the budget of {b}"
            )
        return (
            f"the system prompt ({self.system} tokens) and the current turn ({self.turn} tokens) leave "
            f"{b - self.system - self.turn} tokens, less than the smallest summary record needs ({self.record})"
        )


def budget_floor(
    messages: Sequence[Message], counter: TokenCounter, budget: int, *, keep_pair: bool = False
) -> BudgetFloor:
    """What of `messages` stays whatever a compaction to `budget` does (see the module docstring). `keep_pair`:
    the last body pair counts as part of the current turn even when a user message follows it, as it does below
    a hard limit above the budget (`chainsum.strategies.TailGuard` lets it give way only where the budget is the
    limit)."""
    turn_start = current_turn_start(messages) if keep_pair else newest_turn_start(messages)
    newest_user = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), None)
    kept = list(messages[turn_start:])
    if newest_user is not None and newest_user < turn_start:
        kept.append(messages[newest_user])
    systems = [m for m in messages[:turn_start] if m.role == "system" and not is_summary_system(m)]
    return BudgetFloor(
        budget=budget,
        system=counter.count_messages(systems),
        turn=counter.count_messages(kept),
        record=least_record_tokens(budget) + estimate_margin(budget),
    )
