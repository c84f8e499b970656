"""Repair passes over the *structure* of a history: where tool results sit, their ids, and the order of turns.

They run after the content passes (`_content_passes`), on a list whose messages will all be sent as they are,
and in this order:

1. ``gather-displaced-results`` moves results that answer an assistant's calls but sit after its zone (the
   tool messages directly after it);
2. ``drop-orphan-results`` then drops what still answers nothing (after 1, so no real result is dropped that
   could have been moved);
3. ``add-missing-results`` answers every call left without a result (after 2, so a zone holds exactly one
   result per call from here on);
4. ``fix-tool-call-ids`` renames invalid or duplicate ids on calls and their paired results together (after 3,
   when every call has its one result to rename with it);
5. ``separate-tool-results`` gives tool results a user turn of their own where required (after 3, which can
   add results to a turn that already holds user text);
6. ``ensure-first-user`` puts a user message first where required (after every pass that removes messages);
7. ``merge-assistant-runs`` joins consecutive assistant messages where turns must alternate (last: the passes
   before it remove messages between assistant turns; it never separates a call from its results, since after
   3 an assistant with calls is always followed by a tool message).

Every pass is pure and returns the very input tuple, with no actions, when it has nothing to do.
"""

from __future__ import annotations

import dataclasses

from ..chain import FALLBACK_RESPONSE_CONTENT
from ..messages import Message, Part, ToolResult, utf8_len
from ._checks import first_non_system
from ._content_passes import PassResult
from ._problem import RepairAction
from ._providers import ProviderProfile
from ._turns import ResultRef, describe_call, is_empty, match_refs, pair_results, preview, splice

__all__ = [
    "CONTINUED_TEXT",
    "add_missing_results",
    "drop_orphan_results",
    "ensure_first_user",
    "fix_tool_call_ids",
    "gather_displaced_results",
    "merge_assistant_runs",
    "separate_tool_results",
]

CONTINUED_TEXT = "(continued)"
"""Text of the minimal message inserted where a provider needs a turn the history does not have."""


def _without(message: Message, gone: set[int]) -> Message:
    return message.with_parts([p for j, p in enumerate(message.parts) if j not in gone])


def gather_displaced_results(messages: tuple[Message, ...], profile: ProviderProfile) -> PassResult:
    """``gather-displaced-results``: a result that answers a still-unanswered call of an assistant message but
    sits past its zone (after a user or system message that came between) moves up to the end of the zone, in
    its own tool message, so the user text now follows the results. Only results before the next assistant
    message are considered: further on, position no longer says which turn they belong to.

    First of the structural passes: what it moves is a real result that `drop-orphan-results` would drop and
    `add-missing-results` would replace with a placeholder."""
    pairing = pair_results(messages)
    before: dict[int, list[Message]] = {}
    gone: dict[int, set[int]] = {}
    actions: list[RepairAction] = []
    for ex in pairing.exchanges:
        if not ex.pending:
            continue
        refs: list[ResultRef] = []
        k = ex.zone.stop
        while k < len(messages) and messages[k].role != "assistant":
            if messages[k].role == "tool":
                refs.extend(ResultRef(k, j, p) for j, p in enumerate(messages[k].parts) if isinstance(p, ToolResult))
            k += 1
        answers, _ = match_refs([ex.calls[n] for n in ex.pending], refs)
        moved: dict[int, list[ResultRef]] = {}
        for answer in answers:
            if answer is not None:
                moved.setdefault(answer.message, []).append(answer)
        for src, got in sorted(moved.items()):
            got.sort(key=lambda r: r.part)
            before.setdefault(ex.zone.stop, []).append(messages[src].with_parts([r.result for r in got]))
            gone.setdefault(src, set()).update(r.part for r in got)
            ids = ", ".join(repr(r.result.call_id) for r in got)
            actions.append(
                RepairAction(
                    "gather-displaced-results",
                    src,
                    f"moved the results for call ids {ids} up "
                    f"to right after assistant message {ex.assistant}'s tool results",
                )
            )
    if not actions:
        return messages, ()
    replace: dict[int, Message | None] = {}
    for src, parts in gone.items():
        rest = _without(messages[src], parts)
        replace[src] = rest if rest.parts else None
    return splice(messages, before, replace), tuple(actions)


def drop_orphan_results(messages: tuple[Message, ...], profile: ProviderProfile) -> PassResult:
    """``drop-orphan-results``: removes every tool result that answers no call of the assistant turn right
    before it, and tool messages left empty. The action keeps the call id, tool name, size and the start of the
    content, so what was dropped is on record."""
    pairing = pair_results(messages)
    if not pairing.orphans:
        return messages, ()
    gone: dict[int, set[int]] = {}
    actions: list[RepairAction] = []
    for orphan in pairing.orphans:
        result = orphan.ref.result
        gone.setdefault(orphan.ref.message, set()).add(orphan.ref.part)
        name = f" ({result.name})" if result.name else ""
        actions.append(
            RepairAction(
                "drop-orphan-results",
                orphan.ref.message,
                f"dropped the tool result for call "
                f"id {result.call_id!r}{name}, {utf8_len(result.text)} bytes "
                f"{preview(result.text)}: {orphan.reason}",
            )
        )
    replace: dict[int, Message | None] = {}
    for k, parts in gone.items():
        rest = _without(messages[k], parts)
        if is_empty(rest, profile):
            replace[k] = None
            if rest.parts:
                kinds = ", ".join(p.kind for p in rest.parts)
                actions.append(
                    RepairAction(
                        "drop-orphan-results",
                        k,
                        f"removed the {rest.role} message, left with no content (with its {kinds} parts)",
                    )
                )
        else:
            replace[k] = rest
    return splice(messages, {}, replace), tuple(actions)


def add_missing_results(messages: tuple[Message, ...], profile: ProviderProfile) -> PassResult:
    """``add-missing-results``: every call without a result gets one, an error result reading ``"the call was
    not handled, please try again"`` (the chain spec's text), in a tool message at the end of the call's zone,
    right after the assistant's tool messages.

    At the end, after every result already there, and in call order: pairing is positional, so a placeholder put
    before an existing result could take the call that result answers (a result paired by name, or one of several
    calls sharing an id) and leave that real result an orphan."""
    pairing = pair_results(messages)
    before: dict[int, list[Message]] = {}
    actions: list[RepairAction] = []
    for ex in pairing.exchanges:
        if not ex.pending:
            continue
        for n in ex.pending:
            call = ex.calls[n]
            result = ToolResult(call_id=call.id, name=call.name, content=FALLBACK_RESPONSE_CONTENT, is_error=True)
            before.setdefault(ex.zone.stop, []).append(Message(role="tool", parts=(result,)))
            actions.append(
                RepairAction(
                    "add-missing-results",
                    ex.assistant,
                    f"added an error result for {describe_call(call)}, which had none",
                )
            )
    if not actions:
        return messages, ()
    return splice(messages, before, {}), tuple(actions)


def _id_ok(cid: str, profile: ProviderProfile) -> bool:
    bound = profile.id_max_length
    if len(cid) < profile.id_min_length or (bound is not None and len(cid) > bound):
        return False
    return not cid or profile.id_pattern is None or profile.id_pattern.fullmatch(cid) is not None


def _fresh_id(old: str, used: set[str], profile: ProviderProfile) -> str:
    """A valid id close to `old`: bad characters become ``_``, too long is cut, empty becomes ``call``, and a
    ``_2``, ``_3``... suffix avoids every id in `used`. Deterministic, so repair is too."""
    pattern = profile.id_pattern
    base = "".join(c if pattern is None or pattern.fullmatch(c) else "_" for c in old) or "call"
    bound = profile.id_max_length
    candidate = base if bound is None else base[:bound]
    k = 2
    while candidate in used or not _id_ok(candidate, profile):
        suffix = f"_{k}"
        candidate = (base if bound is None else base[: bound - len(suffix)]) + suffix
        k += 1
    return candidate


def fix_tool_call_ids(messages: tuple[Message, ...], profile: ProviderProfile) -> PassResult:
    """``fix-tool-call-ids``: renames each call whose id the provider rejects (charset, length, empty) or that
    repeats an earlier call's id in the same message, and gives the result paired with it (by position) the
    same new id; where ids are required, a result paired by name also takes its call's exact id. Ids reused in
    *different* turns are left alone: pairing is by position, so they are unambiguous."""
    pairing = pair_results(messages)
    edits: dict[int, dict[int, Part]] = {}
    actions: list[RepairAction] = []
    for ex in pairing.exchanges:
        used = {c.id for c in ex.calls if c.id and _id_ok(c.id, profile)}
        seen: set[str] = set()
        for n, call in enumerate(ex.calls):
            new = call.id
            if not _id_ok(call.id, profile) or (call.id and call.id in seen):
                new = _fresh_id(call.id, used | seen, profile)
                edits.setdefault(ex.assistant, {})[ex.call_parts[n]] = dataclasses.replace(call, id=new)
                actions.append(
                    RepairAction(
                        "fix-tool-call-ids",
                        ex.assistant,
                        f"renamed tool-call id {call.id!r} of {call.name} to {new!r}, with its result",
                    )
                )
            seen.add(new)
            answer = ex.answers[n]
            if answer is None or answer.result.call_id == new:
                continue
            if new == call.id and profile.id_min_length == 0:
                continue  # an id-less result paired by name is fine where ids are optional
            edits.setdefault(answer.message, {})[answer.part] = dataclasses.replace(answer.result, call_id=new)
            if new == call.id:
                actions.append(
                    RepairAction(
                        "fix-tool-call-ids",
                        answer.message,
                        f"gave the result answering "
                        f"{call.name} its call's id {new!r} (it had {answer.result.call_id!r})",
                    )
                )
    if not edits:
        return messages, ()
    replace: dict[int, Message | None] = {}
    for k, parts in edits.items():
        replace[k] = messages[k].with_parts([parts.get(j, p) for j, p in enumerate(messages[k].parts)])
    return splice(messages, {}, replace), tuple(actions)


def separate_tool_results(messages: tuple[Message, ...], profile: ProviderProfile) -> PassResult:
    """``separate-tool-results``: where a wire user turn may hold tool results or other content but not both
    (Bedrock), a minimal assistant message (``(continued)``) goes between tool results and the user message
    that follows them, giving the user content a turn of its own. Nothing is dropped.

    After the passes before it, tool messages hold only results and sit only right after an assistant message
    or another tool message, so a mixed turn is always tool messages followed by user messages.
    """
    if not profile.results_alone:
        return messages, ()
    before: dict[int, list[Message]] = {}
    actions: list[RepairAction] = []
    for k in range(1, len(messages)):
        if messages[k - 1].role == "tool" and messages[k].role == "user":
            before[k] = [Message.of("assistant", CONTINUED_TEXT)]
            actions.append(
                RepairAction(
                    "separate-tool-results",
                    k,
                    f"inserted an assistant message {CONTINUED_TEXT!r} between the tool results before this user "
                    "message and it",
                )
            )
    if not actions:
        return messages, ()
    return splice(messages, before, {}), tuple(actions)


def ensure_first_user(messages: tuple[Message, ...], profile: ProviderProfile) -> PassResult:
    """``ensure-first-user``: where the first non-system message must be a user message and is not, a user
    message ``(continued)`` is inserted before it (the earlier history was cut off, as after compaction)."""
    first = first_non_system(messages)
    if not profile.first_user or first is None or messages[first].role == "user":
        return messages, ()
    action = RepairAction(
        "ensure-first-user",
        first,
        f"inserted a user message {CONTINUED_TEXT!r} before the leading {messages[first].role} message",
    )
    return splice(messages, {first: [Message.of("user", CONTINUED_TEXT)]}, {}), (action,)


def merge_assistant_runs(messages: tuple[Message, ...], profile: ProviderProfile) -> PassResult:
    """``merge-assistant-runs``: where turns must alternate, consecutive assistant messages become one, their
    parts in order; the first message's id, name and extras are kept (the action says when a later one had its
    own)."""
    if not profile.alternation:
        return messages, ()
    out: list[Message] = []
    actions: list[RepairAction] = []
    head = 0
    for i, message in enumerate(messages):
        if out and message.role == "assistant" and out[-1].role == "assistant":
            merged = out[-1]
            out[-1] = Message(
                role="assistant",
                parts=merged.parts + message.parts,
                id=merged.id,
                name=merged.name,
                extras=merged.extras,
            )
            lost = " (its own id and provider extras were not kept)" if message.id or message.extras else ""
            actions.append(RepairAction("merge-assistant-runs", i, f"merged into assistant message {head}{lost}"))
            continue
        head = i
        out.append(message)
    if not actions:
        return messages, ()
    return tuple(out), tuple(actions)
