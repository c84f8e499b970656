"""OpenAI Agents SDK: `ChainsumSession`, a `Session` that keeps the history inside the context window, and
`ChainsumInputFilter`, a ``call_model_input_filter`` that compacts only what the model receives.

Adoption (``pip install "chainsum[openai-agents]"``)::

    from chainsum.integrations.openai_agents import ChainsumSession

    session = ChainsumSession("user-42", model="gpt-4.1", instructions=agent.instructions)
    run_config = RunConfig(call_model_input_filter=session.input_filter)  # also compacts inside a long run
    result = await Runner.run(agent, "Hi", session=session, run_config=run_config)

Which one to use:

- `ChainsumSession` wraps any SDK session (a `SQLiteSession` by default, in memory or in a file with ``db_path=``;
  or pass ``underlying_session=``). Its `get_items` compacts the stored history when it is over the trigger and
  writes the compacted history back into the wrapped session (as the SDK's own ``OpenAIResponsesCompactionSession``
  does): the wrapped session holds the summary record and the newest items verbatim, and every item taken out is in
  chainsum's archive (`ContextManager.archive`, e.g. a `SQLiteStore`; the in-memory default does not outlive the
  process), with the summary record that replaced it. `add_items`, `pop_item` and `clear_session` go straight to the
  wrapped session.
- `ChainsumInputFilter` (``RunConfig(call_model_input_filter=...)``) leaves the saved session untouched: every model
  request is compacted on its way to the model, the session keeps everything. ``session.input_filter`` is one that
  shares the session's manager, for the two together.

What the SDK does that this module answers (read in openai-agents 0.24's source and seen by driving its Runner):

- The Runner reads the session once per `Runner.run`, before the new input is appended, and not again during the
  run. So the session never sees the agent's instructions, the new user message, or the tool steps the run adds:
  ``instructions=`` (the agent's instructions, counted against the window) and ``reserved_tokens=`` (tool
  definitions, the next message, what a run adds) budget for them. Only the filter, which sees every request with
  its instructions and the agent's tools, keeps a run with many tool steps inside the window; use it too.
- The Runner silently drops a function call whose output is missing from the history it reads (its
  ``drop_orphan_function_calls``, meant for stale calls of an interrupted run). A store that lost a result would
  therefore go unnoticed: the model would simply never see the call. So the session checks the history it reads:
  a call whose output is missing although the conversation went on is *lost*, and gets a stand-in output saying so
  (never "please try again": the tool may have run, with side effects), logged as a warning and written back; an
  output whose call is missing is dropped, also with a warning (without a ``limit`` the Runner sends it, and
  OpenAI refuses the request). The calls of the last model response that have no
  output yet are *pending* (a tool awaiting approval: the SDK stores the call and adds its output when the run is
  resumed) and are left as they are. Compaction itself never separates a call from its output.
- The protocol check needs ``session_id`` and ``session_settings``; ``get_items(limit)`` returns the latest N items
  of the compacted history, exactly as the SDK's own sessions count them (its tests hold every session to that:
  0 is none, a negative limit all); a cut that leaves an output without its call is the Runner's to mend, and it
  does (it drops such an output); `latest` is the cut that never separates them, for callers of their own. The
  Runner also reads short tails this way to check its own writes, which the compacted store answers as it holds
  them.
- Recall (archived originals relevant to the newest user message, `ManagerConfig.recall_token_ratio`) is per
  request: only the filter, which sees the newest user message, adds it; the session never stores it.

The summaries can come from an Agents SDK model: ``summarizer=`` takes a ``Model`` (``OpenAIResponsesModel``,
``OpenAIChatCompletionsModel``, a LiteLLM model...), called once per summary with chainsum's system prompt as the
instructions and the framed transcript as the input, no tools, tracing off. A plain string keeps chainsum's meaning
(``"openai:gpt-4.1-mini"`` is chainsum's own OpenAI summarizer); `model_summarizer` takes the SDK's model names
(``model_summarizer("gpt-4.1-mini")``, through its ``MultiProvider``, ``litellm/...`` included). See
`chainsum.integrations._summarizer` for the rule, the fallback and the usage reported.

Both read the SDK's items with the shared `chainsum.manager.GroupReader`: a model turn's items (reasoning, calls, an
assistant message item) read together as one canonical assistant message, each run converted once, so a request
with nothing to compact costs the conversion of what is new; the manager gets `Message` objects, and what it writes
back reuses the items read (a run whose messages came back whole is the very items given) beside the few it wrote
(a summary record, a masked output, a recall block).

One instance serves one conversation: its `ContextManager` holds that conversation's mapping. The manager's
``session`` (the conversation's key in the archive) defaults to the session id.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import operator
import threading
from collections import deque
from collections.abc import Awaitable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from ..errors import FormatError, MissingDependencyError, SummarizerError
from ..executor import check_budget
from ..formats import dump, load
from ..manager import ContextManager, GroupReader, Prepared, ToolTokens, is_recall_message
from ..messages import Message
from ..summarize import SummarizerUsage
from ..summarize.llm import DEFAULT_SYSTEM_PROMPT
from ..tokens import TokenCounter, json_tokens
from ._common import check_manager_arguments, make_manager
from ._summarizer import ModelReply, ModelSummarizer, take_summarizer

try:
    from agents import (
        Agent,
        FunctionTool,
        Handoff,
        Model,
        ModelBehaviorError,
        ModelSettings,
        ModelTracing,
        Session,
        SessionSettings,
        SQLiteSession,
        TResponseInputItem,
    )
    from agents.memory.session_settings import coerce_session_settings, resolve_session_limit
    from agents.run_config import CallModelData, ModelInputData
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("openai-agents", "openai-agents") from exc

__all__ = ["LOST_RESULT", "ChainsumInputFilter", "ChainsumSession", "check_history", "latest", "model_summarizer"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

_FORMAT = "openai-responses"
"""The SDK's items are OpenAI Responses input items."""

LOST_RESULT = (
    "[chainsum: the result of this call is missing from the stored session history; whether the tool ran, and "
    "what it returned, is unknown]"
)
"""The stand-in output given to a call whose output the wrapped session lost."""

_OUTPUT_OF = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "computer_call": "computer_call_output",
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
}
"""Call item types answered by an output item with the same ``call_id`` (the SDK's own table, less the kinds with
no ``call_id`` or with outputs owned by a program)."""
_CALL_OF = {output: call for call, output in _OUTPUT_OF.items()}
_STAND_IN = frozenset({"function_call", "custom_tool_call"})
"""Call types whose output is plain text, so a lost one can be answered by `LOST_RESULT`; a lost call of another
type (a computer or shell call, whose output has a shape of its own) is taken out instead, with a warning."""
_ALL_ITEMS = 2_147_483_647
"""The limit that reads a wrapped session's whole history when its own `session_settings` set a smaller one (the
SDK's compaction session uses the same)."""


# --- the SDK's model as the summarizer ---------------------------------------------------------------------------


def model_summarizer(model: Model | str, *, system_prompt: str = DEFAULT_SYSTEM_PROMPT) -> ModelSummarizer:
    """An Agents SDK model as chainsum's summarizer: one ``get_response`` with chainsum's system prompt as the
    instructions, the framed transcript as the input, no tools, no tracing; the output text parts make the summary
    (a refusal part is a refusal) and the response's usage is reported. A string is a model name as the SDK takes
    it (``"gpt-4.1-mini"``, ``"litellm/anthropic/claude-haiku-4-5"``), resolved by its ``MultiProvider``."""
    given = cast(object, model)  # typed callers are checked by their type checker; the others here
    if not isinstance(given, Model | str):
        raise TypeError(f"model_summarizer() takes an Agents SDK Model or a model name; got {type(given).__name__}")
    if isinstance(model, str):
        from agents.models.multi_provider import MultiProvider

        chosen: Model = MultiProvider().get_model(model)
        name = f"openai-agents:{model}"
    else:
        chosen = model
        name = f"openai-agents:{type(model).__name__}"

    async def call(system: str, transcript: str) -> ModelReply:
        response = await chosen.get_response(
            system,
            transcript,
            ModelSettings(),
            [],
            None,
            [],
            ModelTracing.DISABLED,
            previous_response_id=None,
            conversation_id=None,
            prompt=None,
        )
        texts: list[str] = []
        refusal: str | None = None
        for item in response.output:
            if item.type != "message":
                continue
            for part in item.content:
                if part.type == "output_text":
                    texts.append(part.text)
                else:
                    refusal = part.refusal or "refused"
        usage = response.usage
        counted = SummarizerUsage(
            input_tokens=usage.input_tokens, output_tokens=usage.output_tokens, requests=max(usage.requests, 1)
        )
        return ModelReply("".join(texts) if texts else None, counted, None if texts else refusal)

    return ModelSummarizer(name=name, call=call, model=chosen, classify=_classify, system_prompt=system_prompt)


def _classify(exc: BaseException) -> SummarizerError | None:
    """The SDK's ``ModelBehaviorError`` (an answer it could not use) is ``invalid``; the OpenAI SDK's errors, which
    its models let through, carry their HTTP status for `failure_of`."""
    if isinstance(exc, ModelBehaviorError):
        return SummarizerError(f"{type(exc).__name__}: {exc}"[:200], kind="invalid")
    return None


_MODEL_METHODS = ("get_response", "stream_response")
_SESSION_METHODS = ("get_items", "add_items", "pop_item", "clear_session")


def _poses_as_model(value: object) -> bool:
    """An object with an Agents SDK ``Model``'s methods that is not one (a test double such as
    ``unittest.mock.Mock()`` has every attribute): called as a chainsum summarizer it would answer something that
    is not a summary at the first compaction, rather than be refused now."""
    return all(callable(getattr(value, m, None)) for m in _MODEL_METHODS)


def _adapt(model: object) -> ModelSummarizer | None:
    if isinstance(model, Model):
        return model_summarizer(model)
    if _poses_as_model(model):
        raise TypeError(f"summarizer= has an Agents SDK Model's methods but is a {type(model).__name__}, not one")
    return None


def _check_session(value: object) -> Session:
    """`value` if it is a session the Runner can use (the `Session` protocol, its four methods coroutines, as the
    Runner awaits them), else a one-line `TypeError`."""
    methods = [getattr(value, m, None) for m in _SESSION_METHODS]
    if not isinstance(value, Session) or not all(inspect.iscoroutinefunction(m) for m in methods):
        raise TypeError(
            "underlying_session= takes an Agents SDK Session (session_id and async get_items, add_items, pop_item, "
            f"clear_session); got {type(value).__name__}"
        )
    return value


# --- the history's tool structure --------------------------------------------------------------------------------


def _kind(item: object) -> str | None:
    # a dict first: the SDK's items are dicts, and an ABC check costs more than the rest of the look
    if type(item) is dict or isinstance(item, Mapping):
        return cast(str | None, cast(Mapping[str, Any], item).get("type"))
    return None


def _call_id(item: object) -> str | None:
    value = cast(Mapping[str, Any], item).get("call_id") if type(item) is dict or isinstance(item, Mapping) else None
    return value if isinstance(value, str) else None


def _is_output(item: object) -> bool:
    return _kind(item) in _CALL_OF


def _model_side(item: object) -> bool:
    """An item the model produced: an assistant message, reasoning, a call (not a tool output, not a user, system or
    developer message)."""
    if _is_output(item):
        return False
    role = cast(Mapping[str, Any], item).get("role") if isinstance(item, Mapping) else None
    return role in (None, "assistant")


def _final_response(items: Sequence[object]) -> int:
    """Where the final model response starts: the last run of model-side items, before the tool outputs after it.
    Its calls without output are pending (a tool awaiting approval); older ones were lost."""
    k = len(items)
    while k > 0 and _is_output(items[k - 1]):
        k -= 1
    while k > 0 and _model_side(items[k - 1]):
        k -= 1
    return k


class _Pairing:
    """The calls and outputs of a history (`_pairs`), scanned once and extended by the items added since: a stored
    session only grows between two requests, and scanning all of it again cost more than the rest of a request."""

    def __init__(self) -> None:
        self.scanned = 0
        """Items scanned."""
        self.waiting: dict[tuple[str, str], list[int]] = {}
        """By (output type, call id): the indexes of the calls still without output (none: no key)."""
        self.answered: dict[int, int] = {}
        self.orphans: list[int] = []
        self.basis = -1
        """The read of the shared reader these items are (`GroupReader.reads`): another read since (the filter's,
        of another list) means scanning again."""

    def extend(self, items: Sequence[object]) -> None:
        """Scan `items` past the ones scanned (which must be what `items` starts with)."""
        waiting, answered, orphans = self.waiting, self.answered, self.orphans
        for i in range(self.scanned, len(items)):
            item = items[i]
            kind, cid = _kind(item), _call_id(item)
            if kind is None or cid is None:
                continue
            if kind in _OUTPUT_OF:
                waiting.setdefault((kind, cid), []).append(i)
            elif kind in _CALL_OF:
                key = (_CALL_OF[kind], cid)
                calls = waiting.get(key)
                if calls:
                    answered[i] = calls.pop(0)
                    if not calls:
                        del waiting[key]
                else:
                    orphans.append(i)
        self.scanned = len(items)

    def unanswered(self) -> list[int]:
        return sorted(i for calls in self.waiting.values() for i in calls)


def _pairs(items: Sequence[object]) -> tuple[dict[int, int], list[int], list[int]]:
    """(output index -> call index, unanswered call indexes, orphan output indexes). An output answers the oldest
    unanswered call of its type with its ``call_id`` before it."""
    pairing = _Pairing()
    pairing.extend(items)
    return pairing.answered, pairing.unanswered(), pairing.orphans


def _zone_end(items: Sequence[object], call: int) -> int:
    """Where the outputs of the call at index `call` end: after the rest of its model response and the outputs that
    follow it (the zone chainsum's reader gives that response's results), so a stand-in put there pairs with it."""
    k = call + 1
    while k < len(items) and _model_side(items[k]):
        k += 1
    while k < len(items) and _is_output(items[k]):
        k += 1
    return k


def check_history(
    items: list[TResponseInputItem],
) -> tuple[list[TResponseInputItem], tuple[str, ...], tuple[str, ...]]:
    """`items` with lost results answered and orphan outputs dropped (the same list when there are none), the ids
    of the lost calls and of the dropped outputs. A call without output is *pending* when it belongs to the final
    model response (kept: see the module docstring) and *lost* when the conversation went on after it."""
    _answered, unanswered, orphans = _pairs(items)
    return _fixed(items, [i for i in unanswered if i < _final_response(items)], orphans)


def _fixed(
    items: list[TResponseInputItem], lost: Sequence[int], orphans: Sequence[int]
) -> tuple[list[TResponseInputItem], tuple[str, ...], tuple[str, ...]]:
    """`check_history`'s answer for the indexes of the lost calls and of the orphan outputs of `items`."""
    if not lost and not orphans:
        return items, (), ()
    drop = set(orphans)
    before: dict[int, list[TResponseInputItem]] = {}
    for i in lost:
        call = items[i]
        kind = cast(str, _kind(call))
        if kind in _STAND_IN:
            at = _zone_end(items, i)
            output = {"type": _OUTPUT_OF[kind], "call_id": _call_id(call), "output": LOST_RESULT}
            before.setdefault(at, []).append(cast(TResponseInputItem, output))
        else:
            drop.add(i)
            k = i - 1
            while k >= 0 and _kind(items[k]) == "reasoning":  # a reasoning item must be followed by its item
                drop.add(k)
                k -= 1
    fixed: list[TResponseInputItem] = []
    for i, item in enumerate(items):
        fixed.extend(before.get(i, ()))
        if i not in drop:
            fixed.append(item)
    return (
        fixed,
        tuple(cast(str, _call_id(items[i])) for i in lost),
        tuple(cast(str, _call_id(items[i])) for i in orphans),
    )


def latest(items: list[TResponseInputItem], limit: int) -> list[TResponseInputItem]:
    """The newest `limit` items (SQLite's reading of a limit: 0 is none, a negative one is all), starting later
    where the cut would leave an output without its call or an item without the reasoning item before it."""
    if limit < 0 or limit >= len(items):
        return items
    start = len(items) - limit
    answered, _, _ = _pairs(items)
    moved = True
    while moved and start < len(items):
        moved = False
        if start > 0 and _kind(items[start - 1]) == "reasoning":
            start += 1
            moved = True
        cut = [out for out, call in answered.items() if out >= start and call < start]
        if cut:
            start = max(cut) + 1
            moved = True
    return items[start:]


async def _finish(awaitable: Awaitable[_T]) -> _T:
    """Await `awaitable` to its end even when the caller is cancelled meanwhile (then re-raise the cancellation): a
    store rewrite stopped between its clear and its add would leave the session empty."""
    task = asyncio.ensure_future(awaitable)
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
    return task.result()


class _SessionLock:
    """One session's operations one at a time, from any thread and event loop, first come first served.

    The SDK's own sessions may be shared by threads each running its own event loop (its tests drive a
    `SQLiteSession` from three ``asyncio.run`` at once), and an `asyncio.Lock` belongs to one loop: a waiter of
    another loop is never woken. Here a waiter waits on a future of its own loop, and the holder hands the lock over
    by scheduling the grant on the waiter's loop (``call_soon_threadsafe``); a waiter cancelled after the hand-over
    passes the lock on, so a cancelled run never keeps it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._held = False
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()

    async def __aenter__(self) -> None:
        loop = asyncio.get_running_loop()
        with self._guard:
            if not self._held:
                self._held = True
                return
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiters.append((loop, waiter))
        try:
            await waiter
        except BaseException:
            with self._guard:
                queued = (loop, waiter) in self._waiters
                if queued:
                    self._waiters.remove((loop, waiter))
            if not queued and waiter.done() and not waiter.cancelled():
                self._release()  # granted, then cancelled before running: pass it on
            raise  # (granted to a cancelled future: `_grant` passes it on)

    async def __aexit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        while True:
            with self._guard:
                if not self._waiters:
                    self._held = False
                    return
                loop, waiter = self._waiters.popleft()
            try:
                loop.call_soon_threadsafe(self._grant, waiter)
                return
            except RuntimeError:  # that waiter's loop is closed: the next one
                continue

    def _grant(self, waiter: asyncio.Future[None]) -> None:
        if waiter.cancelled():
            self._release()
        else:
            waiter.set_result(None)


# --- reading and writing the SDK's items ----------------------------------------------------------------------------


_CALL_OUTPUTS = frozenset(_CALL_OF)
_INSTRUCTION_ROLES = frozenset({"system", "developer"})


def _in_turn(item: object) -> bool:
    """An item that reads as part of an assistant message (`chainsum.formats.openai_responses`: an assistant
    message item, reasoning, a call, an item of another type that is not instructions); the others (a user, system
    or developer message, a tool output) are messages of their own."""
    if type(item) is not dict:
        return False
    m = cast(dict[str, Any], item)
    kind = m.get("type", "message")
    if kind == "message":
        return m.get("role") == "assistant"
    return kind not in _CALL_OUTPUTS and isinstance(kind, str) and m.get("role") not in _INSTRUCTION_ROLES


def _joins(before: object, item: object) -> bool:
    return _in_turn(before) and _in_turn(item)


def _convert(run: Sequence[TResponseInputItem]) -> Sequence[Message]:
    return load(list(run), format=_FORMAT).messages


def _dumped(messages: Sequence[Message]) -> list[TResponseInputItem]:
    wire: Any = dump(list(messages), to=_FORMAT)
    return list(cast(list[TResponseInputItem], wire["input"] if isinstance(wire, dict) else wire))


class _Reader:
    """The SDK's items to canonical messages and back, through the shared `GroupReader` (a model turn's items, its
    reasoning, calls and message, read together as one assistant message, each run converted once), with the
    history's calls and outputs (`_Pairing`) kept up to date with it. The session and its `input_filter` share one,
    so that the manager gets the very messages from both."""

    def __init__(self) -> None:
        self.runs: GroupReader[TResponseInputItem] = GroupReader(_convert, _joins)
        self.pairing = _Pairing()

    def read(self, items: Sequence[TResponseInputItem]) -> list[Message]:
        runs = self.runs
        basis = runs.reads
        try:
            messages = runs.read(items)
        except FormatError:
            load(list(items), format=_FORMAT)  # the same error, located in the whole list rather than in its run
            raise
        pairing = self.pairing
        if pairing.basis != basis or runs.same < pairing.scanned:
            pairing = self.pairing = _Pairing()
        pairing.extend(items)
        pairing.basis = runs.reads
        return messages

    def write(self, messages: Sequence[Message]) -> list[TResponseInputItem]:
        """Items for the manager's output: the items read for each run whose messages came back whole, the others
        written (a summary record, a masked output, a recall block)."""
        out: list[TResponseInputItem] = []
        pending: list[Message] = []
        i = 0
        while i < len(messages):
            origin = self.runs.origin(messages[i])
            if origin is not None and origin[1][0] is messages[i]:
                run, own = origin
                if i + len(own) <= len(messages) and all(map(operator.is_, own, messages[i : i + len(own)])):
                    if pending:
                        out.extend(_dumped(pending))
                        pending = []
                    out.extend(run)
                    i += len(own)
                    continue
            pending.append(messages[i])
            i += 1
        if pending:
            out.extend(_dumped(pending))
        return out


# --- the session -------------------------------------------------------------------------------------------------


class ChainsumSession:
    """A `Session` (the SDK's protocol) whose history stays inside the context window. See the module docstring.

    Takes `ContextManager`'s keyword arguments (``config``, ``context_window`` or ``model``, ``summarizers``,
    ``archive``, ``on_event``, ``session``, ...) or a ready ``manager=`` (made for `Message` objects: without
    ``format=``), and ``summarizer=``: an Agents SDK ``Model`` to write the summaries, a chainsum summarizer spec
    string, or a callable (`model_summarizer` for the SDK's model names). When that summarizer fails, `get_items`
    raises (`chainsum.errors.SummarizerError`), so the Runner does: the wrapped session untouched (nothing
    rewritten, nothing archived), and the manager's `SummarizationFailedEvent` says ``aborted``; ``fail_open=True``
    is chainsum's way instead (its extractive summarizer writes the summary, the event lists the failure).

    Args:
        session_id: The session's id, as the SDK uses it (and chainsum's archive key unless ``session=`` is given).
        underlying_session: The session that stores the items; default a new `SQLiteSession` at `db_path`.
        db_path: Where the default `SQLiteSession` keeps its items (``":memory:"``: nowhere after the process).
        session_settings: The SDK's settings (a `SessionSettings` or its dict, as `SQLiteSession` takes them); a
            ``limit`` makes `get_items()` without a limit, and so the Runner, read the newest N items only, after
            compaction (not needed: chainsum budgets in tokens).
        instructions: The agent's instructions, sent with every request but never seen by a session: counted
            against the window.
        reserved_tokens: More room the session must leave: tool definitions, the next user message, the tool
            steps a run adds (or use `input_filter` too, which sees them).
        fail_open: Follow a failing ``summarizer=`` by chainsum's extractive summarizer instead of raising.
    """

    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str,
        underlying_session: Session | None = None,
        *,
        db_path: str | Path = ":memory:",
        session_settings: SessionSettings | Mapping[str, Any] | None = None,
        instructions: str | None = None,
        reserved_tokens: int = 0,
        fail_open: bool = False,
        manager: ContextManager | None = None,
        **manager_kwargs: Any,
    ) -> None:
        if not isinstance(cast(object, session_id), str):
            raise TypeError(f"session_id must be a string; got {type(session_id).__name__}")
        check_manager_arguments(manager, manager_kwargs, framework="Agents SDK", example="gpt-4.1")
        self.session_id = session_id
        self.session_settings = (
            coerce_session_settings(
                dict(session_settings) if isinstance(session_settings, Mapping) else session_settings
            )
            if session_settings is not None
            else SessionSettings()
        )
        self._owns_underlying = underlying_session is None
        self.underlying_session: Session = (
            _check_session(underlying_session) if underlying_session is not None else SQLiteSession(session_id, db_path)
        )
        self.instructions = instructions
        self.reserved_tokens = check_budget(reserved_tokens, "reserved_tokens") or 0
        self.fail_open = fail_open
        """Whether a failing summarizer is followed by chainsum's extractive one (else `get_items` raises)."""
        take_summarizer(manager_kwargs, _adapt, "OpenAI Agents SDK", fail_open=fail_open)
        if manager is None:
            manager_kwargs.setdefault("session", session_id)
        self.manager: ContextManager = make_manager(manager, manager_kwargs)
        """The `ContextManager` doing the work; its archive holds every item taken out of the stored history."""
        self.last: Prepared[Any] | None = None
        """What the latest `get_items` prepared (its event, records, token counts)."""
        self.rewrites = 0
        """How many times the wrapped session's items were replaced by their compacted form."""
        self._serial = _SessionLock()
        """Its operations one at a time (a compaction rewrites the store between a read and a write)."""
        self._filter: ChainsumInputFilter | None = None
        self._reader = _Reader()

    @property
    def input_filter(self) -> ChainsumInputFilter:
        """A ``call_model_input_filter`` sharing this session's manager: it compacts each model request inside a
        run (which the session never sees) and adds recall; the next `get_items` writes what it compacted back."""
        if self._filter is None:
            self._filter = ChainsumInputFilter(manager=self.manager)
            self._filter._reader = self._reader  # pyright: ignore[reportPrivateUsage]  # one reader: see `_Reader`
        return self._filter

    # the Session protocol ----------------------------------------------------------------------------------------
    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The compacted history (the newest `limit` items of it, or `session_settings.limit`'s, counted as the
        SDK's sessions count them), compacting and writing back first when it is over the trigger."""
        async with self._serial:
            items = await self._compacted()
        n = resolve_session_limit(limit, self.session_settings)
        if n is None or n < 0:  # SQLite's reading of a negative limit, which the SDK keeps: all
            return list(items)
        return list(items[-n:]) if n else []

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        async with self._serial:
            await self.underlying_session.add_items(items)

    async def pop_item(self) -> TResponseInputItem | None:
        async with self._serial:
            return await self.underlying_session.pop_item()

    async def clear_session(self) -> None:
        """Clear the wrapped session (chainsum's archive keeps what it archived)."""
        async with self._serial:
            await self.underlying_session.clear_session()
            self.last = None

    def close(self) -> None:
        """Close the wrapped session when this one made it (the default `SQLiteSession`)."""
        close = getattr(self.underlying_session, "close", None)
        if self._owns_underlying and callable(close):
            close()

    # work ----------------------------------------------------------------------------------------------------------
    async def _read_all(self) -> list[TResponseInputItem]:
        settings = getattr(self.underlying_session, "session_settings", None)
        own = getattr(settings, "limit", None)
        return await self.underlying_session.get_items(None if own is None else _ALL_ITEMS)

    async def _compacted(self) -> list[TResponseInputItem]:
        stored = await self._read_all()
        reader = self._reader
        canonical = reader.read(stored)
        pairing = reader.pairing
        unanswered = pairing.unanswered()
        final = _final_response(stored) if unanswered else 0
        items, lost, orphans = _fixed(stored, [i for i in unanswered if i < final], pairing.orphans)
        if items is not stored:
            canonical = reader.read(items)
        if lost:
            logger.warning(
                "session=<%s>, call_ids=<%s> | tool results missing from the stored history; answered with a "
                "stand-in (calls whose output is not text: taken out); the Runner would drop them without a word",
                self.session_id,
                ",".join(lost),
            )
        if orphans:
            logger.warning(
                "session=<%s>, call_ids=<%s> | tool outputs whose call is missing from the stored history; dropped",
                self.session_id,
                ",".join(orphans),
            )
        prepared = await self.manager.prepare(canonical, system=self.instructions, reserved_tokens=self.reserved_tokens)
        self.last = prepared
        keep = items
        if prepared.messages is not canonical:
            out = cast(list[Message], prepared.messages)
            written = reader.write([m for m in out if not is_recall_message(m)] if prepared.recalled else out)
            if written != items:
                keep = written
        if keep is not stored:
            rewrites = self.rewrites
            await _finish(self._replace(stored, keep))
            if self.rewrites > rewrites:
                reader.read(keep)  # what the store holds now: its next read is this list grown
        return keep

    async def _replace(self, old: list[TResponseInputItem], new: list[TResponseInputItem]) -> None:
        """Store `new` in place of `old` (clear, then add; the SDK's compaction session does the same). When that
        fails, `old` is put back and the compacted history is still returned: what was taken out is archived, and
        the next call maps the full history onto it again."""
        try:
            await self.underlying_session.clear_session()
            await self.underlying_session.add_items(new)
        except Exception:
            logger.exception("session=<%s> | writing the compacted history failed; restoring it", self.session_id)
            await self.underlying_session.clear_session()
            await self.underlying_session.add_items(old)
            return
        self.rewrites += 1
        logger.debug(
            "session=<%s>, items_before=<%d>, items_after=<%d> | stored history replaced",
            self.session_id,
            len(old),
            len(new),
        )


# --- the filter --------------------------------------------------------------------------------------------------


class ChainsumInputFilter:
    """A ``RunConfig(call_model_input_filter=...)`` that compacts each model request, the saved session untouched.

    It sees what the session cannot: the instructions (counted as the system prompt) and every request of a run.
    The agent's function tools and handoffs are counted against the window when `count_tools` (hosted and MCP tools
    are not: reserve room for them with `reserved_tokens`). Takes `ContextManager`'s keyword arguments or
    ``manager=``; pass ``session=`` (the conversation's key in the archive) when one archive serves several.
    ``summarizer=`` and ``fail_open=`` are as for `ChainsumSession`: when the summarizer fails the filter raises,
    so the run does (the SDK's rule for a ``call_model_input_filter`` that raises), unless ``fail_open=True``.
    """

    def __init__(
        self,
        *,
        reserved_tokens: int = 0,
        count_tools: bool = True,
        fail_open: bool = False,
        manager: ContextManager | None = None,
        **manager_kwargs: Any,
    ) -> None:
        check_manager_arguments(manager, manager_kwargs, framework="Agents SDK", example="gpt-4.1")
        take_summarizer(manager_kwargs, _adapt, "OpenAI Agents SDK", fail_open=fail_open)
        self.fail_open = fail_open
        self.manager: ContextManager = make_manager(manager, manager_kwargs)
        self.reserved_tokens = check_budget(reserved_tokens, "reserved_tokens") or 0
        self.count_tools = count_tools
        self.last: Prepared[Any] | None = None
        """What the latest call prepared."""
        self._tools = ToolTokens(_tool_tokens)
        self._reader = _Reader()

    async def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        model_data = data.model_data
        agent = data.agent
        tools = self._tools.count([*agent.tools, *agent.handoffs], self.manager.counter) if self.count_tools else 0
        reserved = self.reserved_tokens + tools
        canonical = self._reader.read(model_data.input)
        prepared = await self.manager.prepare(canonical, system=model_data.instructions, reserved_tokens=reserved)
        self.last = prepared
        if prepared.messages is canonical:
            out = list(model_data.input)
        else:
            out = self._reader.write(cast(list[Message], prepared.messages))
        return ModelInputData(input=out, instructions=model_data.instructions)


def _tool_tokens(owned: Sequence[object], counter: TokenCounter) -> int:
    """Tokens of the function tools' and handoffs' definitions (hosted and MCP tools are not counted)."""
    specs: list[dict[str, Any]] = []
    for tool in owned:
        if isinstance(tool, FunctionTool):
            specs.append({"name": tool.name, "description": tool.description, "parameters": tool.params_json_schema})
        elif isinstance(tool, Handoff):
            specs.append(
                {"name": tool.tool_name, "description": tool.tool_description, "parameters": tool.input_json_schema}
            )
        elif isinstance(tool, Agent):
            specs.append({"name": tool.name, "description": tool.handoff_description or ""})
    return json_tokens(counter, specs)
