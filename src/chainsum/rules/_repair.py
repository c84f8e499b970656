"""`repair`: ordered pure passes that turn any message list into one the provider accepts.

The order (each pass's docstring says what it adds or removes and why it sits where it does):

1. ``fold-misplaced-calls``: tool calls outside assistant turns become text with their results, before any
   pass could take those results for orphans or those calls for unanswered ones;
2. ``fold-system-messages``: mid-conversation system messages become ``[system]`` user messages, before the
   structural passes, which must see roles as they will be sent;
3. ``drop-foreign-opaque``, 4. ``drop-unsigned-reasoning``, 5. ``drop-empty``: remove what cannot be sent,
   before pairing, so that no message that is about to disappear ends a zone and orphans real results;
6. ``split-tool-messages``: non-result parts of tool messages move to a user message after them, so the
   passes after it see tool messages as pure result containers;
7. ``gather-displaced-results`` … 13. ``merge-assistant-runs``: the tool-structure and turn-order passes, in
   the order given in `_tool_passes`.

Repair never loses text silently: the only text removed is blank; dropped results, blocks and reasoning are
each named in an action. Repairing a valid history returns it unchanged, and repair is idempotent (both are
property tests): every pass acts only on what a `validate` check reports.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from ..formats import as_messages
from ..messages import Message
from ._content_passes import (
    PassResult,
    drop_empty,
    drop_foreign_opaque,
    drop_unsigned_reasoning,
    fold_misplaced_calls,
    fold_system_messages,
    split_tool_messages,
)
from ._problem import RepairAction, Repaired
from ._providers import ProviderProfile, get_profile
from ._tool_passes import (
    add_missing_results,
    drop_orphan_results,
    ensure_first_user,
    fix_tool_call_ids,
    gather_displaced_results,
    merge_assistant_runs,
    separate_tool_results,
)

__all__ = ["PASSES", "Pass", "repair"]

Pass = Callable[[tuple[Message, ...], ProviderProfile], PassResult]

PASSES: tuple[tuple[str, Pass], ...] = (
    ("fold-misplaced-calls", fold_misplaced_calls),
    ("fold-system-messages", fold_system_messages),
    ("drop-foreign-opaque", drop_foreign_opaque),
    ("drop-unsigned-reasoning", drop_unsigned_reasoning),
    ("drop-empty", drop_empty),
    ("split-tool-messages", split_tool_messages),
    ("gather-displaced-results", gather_displaced_results),
    ("drop-orphan-results", drop_orphan_results),
    ("add-missing-results", add_missing_results),
    ("fix-tool-call-ids", fix_tool_call_ids),
    ("separate-tool-results", separate_tool_results),
    ("ensure-first-user", ensure_first_user),
    ("merge-assistant-runs", merge_assistant_runs),
)
"""The passes by name, in the order `repair` runs them."""


def repair(messages: Sequence[Message], provider: str, *, only: Collection[str] | None = None) -> Repaired:
    """`messages` made valid for `provider`, with every change reported (`only`: just the passes of these names).

    When nothing needs repair the result holds the input itself (a tuple input is returned as is; a list is
    copied into a tuple) and no actions. `messages` may also be wire message dicts of any format (read by
    `chainsum.formats.as_messages`). Raises `UnknownProviderError` for an unknown provider.
    """
    profile = get_profile(provider)
    messages = as_messages(messages)
    current = messages if isinstance(messages, tuple) else tuple(messages)
    actions: list[RepairAction] = []
    if only is not None and (unknown := set(only) - {name for name, _ in PASSES}):
        raise ValueError(f"unknown repair pass(es): {', '.join(sorted(unknown))}")
    for name, run in PASSES:
        if only is not None and name not in only:
            continue
        current, done = run(current, profile)
        actions.extend(done)
    return Repaired(current, tuple(actions))
