"""What validation and repair report: a `Problem` per broken rule, a `RepairAction` per change, and the error
for a provider chainsum has no rules for."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UnknownProviderError
from ..messages import Message

__all__ = ["Problem", "RepairAction", "Repaired", "UnknownProviderError"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One way a history breaks a provider's rules."""

    rule: str
    """Stable kebab-case rule id, such as ``tool-result-missing`` (see `chainsum.rules.RULES`)."""
    index: int
    """Index of the canonical message the problem is on (for a wire turn, the message that starts it)."""
    detail: str
    """A sentence for people, naming the roles, ids and tool names involved."""

    def __str__(self) -> str:
        return f"message {self.index}: {self.rule}: {self.detail}"


@dataclass(frozen=True, slots=True)
class RepairAction:
    """One change a provider repair pass made (`chainsum.rules.repair`), listed in `Repaired.actions`.

    Keyed by the pass that made it, not by a rule. Not the same thing as `chainsum.chain.ChainRepair`: that is the
    chain's record of a structural fix (a numbered rule of ``specs/chain-ast.md``) made while building the tree,
    with an index in the builder's input. The two stay apart because they fix different rule sets at different
    layers, and `chainsum.executor.CompactResult` reports both (``repairs``, ``provider_repairs``)."""

    pass_name: str
    """The pass that made it (``add-missing-results``, ...), in the order `repair` runs them."""
    index: int
    """Index of the message concerned in the list that pass received: earlier passes may have shifted
    positions, so an index is exact for its own pass, not for the original input."""
    detail: str

    def __str__(self) -> str:
        return f"{self.pass_name}: message {self.index}: {self.detail}"


@dataclass(frozen=True, slots=True)
class Repaired:
    """What `chainsum.rules.repair` returns: the history repaired for one provider and every `RepairAction` made to
    reach it."""

    messages: tuple[Message, ...]
    """The history, valid for the provider. When nothing needed repair this is the input itself (when the
    input was a tuple; a list is copied into one)."""
    actions: tuple[RepairAction, ...]
    """Every change, in the order made; empty when the input was already valid."""

    @property
    def changed(self) -> bool:
        return bool(self.actions)
