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
  (of the compacted history, starting where no output is separated from its call); the Runner also reads short
  tails this way to check its own writes, which the compacted store answers as it holds them.
- Recall (archived originals relevant to the newest user message, `ManagerConfig.recall_token_ratio`) is per
  request: only the filter, which sees the newest user message, adds it; the session never stores it.

The summaries can come from an Agents SDK model: ``summarizer=`` takes a ``Model`` (``OpenAIResponsesModel``,
``OpenAIChatCompletionsModel``, a LiteLLM model...), called once per summary with chainsum's system prompt as the
instructions and the framed transcript as the input, no tools, tracing off. A plain string keeps chainsum's meaning
(``"openai:gpt-4.1-mini"`` is chainsum's own OpenAI summarizer); `model_summarizer` takes the SDK's model names
(``model_summarizer("gpt-4.1-mini")``, through its ``MultiProvider``, ``litellm/...`` included). See
`chainsum.integrations._summarizer` for the rule, the fallback and the usage reported.

One instance serves one conversation: its `ContextManager` holds that conversation's mapping. The manager's
``session`` (the conversation's key in the archive) defaults to the session id.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from ..errors import MissingDependencyError, SummarizerError
from ..executor import check_budget
from ..manager import ContextManager, Prepared, ToolTokens, is_recall_text
from ..summarize import SummarizerUsage
from ..summarize.llm import DEFAULT_SYSTEM_PROMPT
from ..tokens import TokenCounter, json_tokens
from ._common import make_manager
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
    from agents.memory.session_settings import resolve_session_limit
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


def _adapt(model: object) -> ModelSummarizer | None:
    return model_summarizer(model) if isinstance(model, Model) else None


# --- the history's tool structure --------------------------------------------------------------------------------


def _kind(item: object) -> str | None:
    return cast(str | None, cast(Mapping[str, Any], item).get("type")) if isinstance(item, Mapping) else None


def _call_id(item: object) -> str | None:
    value = cast(Mapping[str, Any], item).get("call_id") if isinstance(item, Mapping) else None
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


def _pairs(items: Sequence[object]) -> tuple[dict[int, int], list[int], list[int]]:
    """(output index -> call index, unanswered call indexes, orphan output indexes). An output answers the oldest
    unanswered call of its type with its ``call_id`` before it."""
    open_calls: dict[tuple[str, str], list[int]] = {}
    answered: dict[int, int] = {}
    orphans: list[int] = []
    for i, item in enumerate(items):
        kind = _kind(item)
        cid = _call_id(item)
        if kind is None or cid is None:
            continue
        if kind in _OUTPUT_OF:
            open_calls.setdefault((kind, cid), []).append(i)
        elif kind in _CALL_OF:
            waiting = open_calls.get((_CALL_OF[kind], cid))
            if waiting:
                answered[i] = waiting.pop(0)
            else:
                orphans.append(i)
    unanswered = sorted(i for waiting in open_calls.values() for i in waiting)
    return answered, unanswered, orphans


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
    final = _final_response(items)
    lost = [i for i in unanswered if i < final]
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


def _is_recall(item: object) -> bool:
    if not isinstance(item, Mapping) or cast(Mapping[str, Any], item).get("role") != "user":
        return False
    content = cast(Mapping[str, Any], item).get("content")
    if isinstance(content, str):
        return is_recall_text(content)
    if isinstance(content, list) and content:
        first = cast(list[Any], content)[0]
        return isinstance(first, Mapping) and is_recall_text(str(cast(Mapping[str, Any], first).get("text", "")))
    return False


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


# --- the session -------------------------------------------------------------------------------------------------


class ChainsumSession:
    """A `Session` (the SDK's protocol) whose history stays inside the context window. See the module docstring.

    Takes `ContextManager`'s keyword arguments (``config``, ``context_window`` or ``model``, ``summarizers``,
    ``archive``, ``on_event``, ``session``, ...; the format is the SDK's, ``"openai-responses"``) or a ready
    ``manager=`` (made with ``format="openai-responses"``), and ``summarizer=``: an Agents SDK ``Model`` to write the
    summaries, a chainsum summarizer spec string, or a callable (then the extractive fallback; `model_summarizer`
    for the SDK's model names).

    Args:
        session_id: The session's id, as the SDK uses it (and chainsum's archive key unless ``session=`` is given).
        underlying_session: The session that stores the items; default a new `SQLiteSession` at `db_path`.
        db_path: Where the default `SQLiteSession` keeps its items (``":memory:"``: nowhere after the process).
        session_settings: The SDK's settings; a ``limit`` makes the Runner read the newest N items only, after
            compaction (not needed: chainsum budgets in tokens).
        instructions: The agent's instructions, sent with every request but never seen by a session: counted
            against the window.
        reserved_tokens: More room the session must leave: tool definitions, the next user message, the tool
            steps a run adds (or use `input_filter` too, which sees them).
    """

    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str,
        underlying_session: Session | None = None,
        *,
        db_path: str | Path = ":memory:",
        session_settings: SessionSettings | None = None,
        instructions: str | None = None,
        reserved_tokens: int = 0,
        manager: ContextManager | None = None,
        **manager_kwargs: Any,
    ) -> None:
        self.session_id = session_id
        self.session_settings = session_settings if session_settings is not None else SessionSettings()
        self._owns_underlying = underlying_session is None
        self.underlying_session: Session = (
            underlying_session if underlying_session is not None else SQLiteSession(session_id, db_path)
        )
        self.instructions = instructions
        self.reserved_tokens = check_budget(reserved_tokens, "reserved_tokens") or 0
        take_summarizer(manager_kwargs, _adapt, "OpenAI Agents SDK")
        if manager is None:
            manager_kwargs.setdefault("session", session_id)
        self.manager: ContextManager = make_manager(manager, manager_kwargs, format=_FORMAT)
        """The `ContextManager` doing the work; its archive holds every item taken out of the stored history."""
        self.last: Prepared[Any] | None = None
        """What the latest `get_items` prepared (its event, records, token counts)."""
        self.rewrites = 0
        """How many times the wrapped session's items were replaced by their compacted form."""
        self._lock = asyncio.Lock()
        self._filter: ChainsumInputFilter | None = None

    @property
    def input_filter(self) -> ChainsumInputFilter:
        """A ``call_model_input_filter`` sharing this session's manager: it compacts each model request inside a
        run (which the session never sees) and adds recall; the next `get_items` writes what it compacted back."""
        if self._filter is None:
            self._filter = ChainsumInputFilter(manager=self.manager)
        return self._filter

    # the Session protocol ----------------------------------------------------------------------------------------
    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The compacted history (the newest `limit` items of it, or `session_settings.limit`'s), compacting and
        writing back first when it is over the trigger."""
        async with self._lock:
            items = await self._compacted()
        n = resolve_session_limit(limit, self.session_settings)
        return list(items) if n is None else latest(items, n)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        async with self._lock:
            await self.underlying_session.add_items(items)

    async def pop_item(self) -> TResponseInputItem | None:
        async with self._lock:
            return await self.underlying_session.pop_item()

    async def clear_session(self) -> None:
        """Clear the wrapped session (chainsum's archive keeps what it archived)."""
        async with self._lock:
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
        items, lost, orphans = check_history(stored)
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
        prepared = await self.manager.prepare(items, system=self.instructions, reserved_tokens=self.reserved_tokens)
        self.last = prepared
        out = cast(list[TResponseInputItem], list(prepared.messages))
        keep = [item for item in out if not _is_recall(item)] if prepared.recalled else out
        if keep != stored:
            await _finish(self._replace(stored, keep))
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
    ``summarizer=`` is as for `ChainsumSession`: an Agents SDK ``Model``, a chainsum spec string, or a callable.
    """

    def __init__(
        self,
        *,
        reserved_tokens: int = 0,
        count_tools: bool = True,
        manager: ContextManager | None = None,
        **manager_kwargs: Any,
    ) -> None:
        take_summarizer(manager_kwargs, _adapt, "OpenAI Agents SDK")
        self.manager: ContextManager = make_manager(manager, manager_kwargs, format=_FORMAT)
        self.reserved_tokens = check_budget(reserved_tokens, "reserved_tokens") or 0
        self.count_tools = count_tools
        self.last: Prepared[Any] | None = None
        """What the latest call prepared."""
        self._tools = ToolTokens(_tool_tokens)

    async def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        model_data = data.model_data
        agent = data.agent
        tools = self._tools.count([*agent.tools, *agent.handoffs], self.manager.counter) if self.count_tools else 0
        reserved = self.reserved_tokens + tools
        prepared = await self.manager.prepare(
            model_data.input, system=model_data.instructions, reserved_tokens=reserved
        )
        self.last = prepared
        return ModelInputData(
            input=cast(list[TResponseInputItem], list(prepared.messages)), instructions=model_data.instructions
        )


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
