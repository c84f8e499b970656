"""The compaction libraries `bench_cost.py` drives, each behind one small interface (`Peer`), on the same requests.

Every peer gets the agent's history one model request at a time (the new messages since its last request) and
answers the messages it would send; the benchmark prices and checks what it answers. All of them summarize with the
same fake summarizer (`FixedRatioSummary`: every tenth line of what it is given, so its output, and so its cost,
grows with its input as a model's would), counted the same way. Each peer is configured with the trigger and the
share it keeps as its documentation shows them, at chainsum's trigger ratio where it has a token trigger.

The peers that are not project dependencies (``zrb``, ``langmem``) are imported here, lazily: run the benchmark with
``uv run --with zrb --with langmem python bench/bench_cost.py``; a peer that cannot be imported or driven is reported
with the reason and left out.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from chainsum import formats
from chainsum.manager import ContextManager, ManagerConfig
from chainsum.messages import Message
from chainsum.summarize import ExtractiveSummarizer
from chainsum.tokens import HeuristicCounter

COUNTER = HeuristicCounter()
TRIGGER = 0.8
"""Where every peer with a token trigger summarizes: chainsum's default trigger ratio."""


@dataclass
class FixedRatioSummary:
    """The one fake summarizer of every peer: every `every`-th line of its input (the first tenth of a text with
    fewer lines), counting calls and the tokens in and out (`HeuristicCounter`)."""

    every: int = 10
    priced: bool = True
    """False for a summarizer that calls no model (chainsum's extractive one): counted, priced at 0."""
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    inputs: list[str] = field(default_factory=list[str])
    """What it was given since the benchmark last emptied the list (once a request): what the model read."""

    def __call__(self, text: str) -> str:
        self.calls += 1
        self.inputs.append(text)
        self.input_tokens += COUNTER.count_text(text)
        lines = text.splitlines()
        if len(lines) >= 2 * self.every:
            out = "\n".join(lines[:: self.every])
        else:
            out = text[: max(1, len(text) // self.every)]
        out = out.strip() or "(nothing to summarize)"
        self.output_tokens += COUNTER.count_text(out)
        return out


class Peer(Protocol):
    name: str
    summary: FixedRatioSummary

    async def request(self, new: Sequence[Message]) -> list[Message]:
        """Take the messages since the last request; answer the messages this request sends."""
        ...


# chainsum --------------------------------------------------------------------------------------------------------
@dataclass
class Chainsum:
    """`ContextManager.prepare` on the caller's full history; `ManagerConfig` from the ``SUMMARIZATION_*`` variables
    (unset: the defaults), so that a setting can be tried without editing anything."""

    window: int
    provider: str
    name: str = "chainsum"
    config: ManagerConfig = field(default_factory=lambda: ManagerConfig.from_env(dotenv_path=None))
    extractive: bool = False
    """True: chainsum's own extractive summarizer (no model: its calls are counted, and priced at 0)."""
    summary: FixedRatioSummary = field(default_factory=FixedRatioSummary)
    history: list[Message] = field(default_factory=list[Message])
    manager: ContextManager | None = None
    events: list[Any] = field(default_factory=list[Any])
    """The manager's events (the compactions' model coverage is read from them)."""

    def __post_init__(self) -> None:
        # the model, then the extractive summarizer, as `ManagerConfig`'s summarizers are built (the extractive one
        # writes what the model failed on, or, with the opt-in ``model_tokens_per_compaction``, what is past it)
        summarizers: list[Any] = [self.summary, ExtractiveSummarizer()]
        if self.extractive:
            self.summary.priced = False
            summarizers = [_Counted(ExtractiveSummarizer(), self.summary)]
        self.manager = ContextManager(
            self.config,
            context_window=self.window,
            summarizers=summarizers,
            provider=self.provider,
            on_event=self.events.append,
        )

    async def request(self, new: Sequence[Message]) -> list[Message]:
        assert self.manager is not None
        self.history.extend(new)
        return list((await self.manager.prepare(self.history)).messages)


@dataclass
class _Counted:
    """chainsum's extractive summarizer, its calls and tokens counted in `counted` (priced at 0). ``inner`` is the
    summarizer itself, as `chainsum.manager.CountingSummarizer` has it: how the manager sees that it calls no
    model (its cache-aware choice prices a model-free summarizer at 0)."""

    inner: ExtractiveSummarizer
    counted: FixedRatioSummary

    async def __call__(self, text: str) -> str:
        self.counted.calls += 1
        self.counted.inputs.append(text)
        self.counted.input_tokens += COUNTER.count_text(text)
        out = await self.inner(text)
        self.counted.output_tokens += COUNTER.count_text(out)
        return out


# LangChain -------------------------------------------------------------------------------------------------------
def _langchain_model(summary: FixedRatioSummary) -> Any:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class FakeSummaryModel(BaseChatModel):
        """Answers `summary` of the whole prompt it is sent."""

        @property
        def _llm_type(self) -> str:
            return "fixed-ratio-summary"

        def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
            text = summary("\n".join(m.text for m in messages))
            return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])

    return FakeSummaryModel()


@dataclass
class LangChain:
    """``SummarizationMiddleware(model, trigger=("tokens", 0.8 W), keep=("tokens", keep W))`` as the agent calls it
    before each model call (its ``before_model`` on the agent state; the state is replaced by what it returns)."""

    window: int
    provider: str
    keep: float = 0.3
    name: str = "langchain"
    summary: FixedRatioSummary = field(default_factory=FixedRatioSummary)
    state: list[Any] = field(default_factory=list[Any])
    middleware: Any = None
    seen: int = 0

    def __post_init__(self) -> None:
        from langchain.agents.middleware import SummarizationMiddleware

        self.middleware = SummarizationMiddleware(
            _langchain_model(self.summary),
            trigger=("tokens", int(TRIGGER * self.window)),
            keep=("tokens", int(self.keep * self.window)),
        )

    async def request(self, new: Sequence[Message]) -> list[Message]:
        from langchain_core.messages import RemoveMessage

        from chainsum.formats.langchain import from_objects, to_objects

        for m in to_objects(list(new)):
            # an id from the start, as an agent's messages have: the middleware gives one to a message without, and
            # that later id would read as an edit of what was sent (a cache break that is the harness's doing)
            m.id = f"m{self.seen}"
            self.seen += 1
            self.state.append(m)
        update = self.middleware.before_model({"messages": self.state}, None)
        if update is not None:
            self.state = [m for m in update["messages"] if not isinstance(m, RemoveMessage)]
        return from_objects(self.state)


# LangMem ---------------------------------------------------------------------------------------------------------
@dataclass
class LangMem:
    """``summarize_messages(history, running_summary=..., max_tokens_before_summary=0.8 W, max_tokens=0.8 W,
    max_summary_tokens=0.1 W)`` on the full history before each request, as its docs show (the running summary
    kept between calls); what it returns is sent."""

    window: int
    provider: str
    name: str = "langmem"
    summary: FixedRatioSummary = field(default_factory=FixedRatioSummary)
    history: list[Any] = field(default_factory=list[Any])
    running: Any = None
    model: Any = None
    summarize: Any = None

    def __post_init__(self) -> None:
        self.summarize = importlib.import_module("langmem.short_term").summarize_messages  # not a dependency
        self.model = _langchain_model(self.summary)

    async def request(self, new: Sequence[Message]) -> list[Message]:
        from chainsum.formats.langchain import from_objects, to_objects

        for m in to_objects(list(new)):
            m.id = f"m{len(self.history)}"  # langmem keys what it summarized by message id
            self.history.append(m)
        result: Any = self.summarize(
            self.history,
            running_summary=self.running,
            model=self.model,
            max_tokens=int(TRIGGER * self.window),
            max_tokens_before_summary=int(TRIGGER * self.window),
            max_summary_tokens=int(0.1 * self.window),
        )
        self.running = result.running_summary
        return from_objects(result.messages)


# zrb -------------------------------------------------------------------------------------------------------------
@dataclass
class Zrb:
    """zrb's history processor (``create_summarizer_history_processor``, a pydantic-ai history processor) with its
    conversational trigger at 0.8 W, its summarizer agents pydantic-ai agents on a `FunctionModel` answering the
    fixed-ratio summary; the agent's history becomes what the processor returns (plus what follows)."""

    window: int
    provider: str
    name: str = "zrb"
    summary: FixedRatioSummary = field(default_factory=FixedRatioSummary)
    state: list[Any] = field(default_factory=list[Any])
    process: Any = None
    tmp: Any = None

    def __post_init__(self) -> None:
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
        from pydantic_ai.models.function import AgentInfo, FunctionModel

        history = importlib.import_module("zrb.llm.summarizer.history_summarizer")  # not a dependency
        create_summarizer_history_processor: Any = history.create_summarizer_history_processor

        summary = self.summary

        def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            text = "\n".join(
                str(getattr(p, "content", ""))
                for m in messages
                for p in m.parts
                if isinstance(getattr(p, "content", None), str)
            )
            return ModelResponse(parts=[TextPart(summary(text))])

        self.tmp = tempfile.TemporaryDirectory(prefix="bench-cost-zrb-")
        threshold = int(TRIGGER * self.window)
        self.process = create_summarizer_history_processor(
            conversational_agent=Agent(FunctionModel(answer)),
            message_agent=Agent(FunctionModel(answer)),
            conversational_token_threshold=threshold,
            message_token_threshold=threshold // 2,
            session_name="bench-cost",
            history_dir=self.tmp.name,
        )

    async def request(self, new: Sequence[Message]) -> list[Message]:
        from chainsum.formats.pydantic_ai import dump_messages, load_messages

        self.state.extend(dump_messages(list(new)))
        self.state = list(await self.process(self.state))
        return list(load_messages(self.state))


# Strands ---------------------------------------------------------------------------------------------------------
@dataclass
class Strands:
    """``SummarizingConversationManager(proactive_compression={"compression_threshold": 0.8})`` as a Strands agent
    runs it, without the agent: before each model call its threshold check (the projected request over the
    threshold share of ``context_window_limit``: `reduce_context` with no error, best-effort), then the provider's
    refusal of a request over the window, on which the agent calls ``reduce_context(agent, e)`` and asks again (its
    overflow recovery; what it cannot reduce raises, and the request goes as it is, over the window). The agent's
    messages are Bedrock Converse dicts (Strands' own); its summary comes from `_generate_summary`, replaced here by
    the fixed-ratio summary of the messages' text (the real one sends them to the agent's model), re-roled as the
    user-role message Strands keeps."""

    window: int
    provider: str
    name: str = "strands"
    summary: FixedRatioSummary = field(default_factory=FixedRatioSummary)
    state: list[Any] = field(default_factory=list[Any])
    system: Any = None
    manager: Any = None

    def __post_init__(self) -> None:
        from strands.agent.conversation_manager import SummarizingConversationManager

        from chainsum.testing.retention import texts

        logging.getLogger("strands").setLevel(logging.CRITICAL)  # each failed reduction logs; the table counts them
        self.manager = SummarizingConversationManager(proactive_compression={"compression_threshold": TRIGGER})
        summary = self.summary

        def generate(messages: list[Any], agent: Any) -> Any:
            text = "\n".join(texts([m]) for m in formats.load({"messages": messages}, "bedrock").messages)
            return {"role": "user", "content": [{"text": summary(text)}]}

        self.manager._generate_summary = generate

    def _request(self) -> list[Message]:
        data: dict[str, Any] = {"messages": self.state}
        if self.system:
            data["system"] = self.system
        return list(formats.load(data, "bedrock").messages)

    async def request(self, new: Sequence[Message]) -> list[Message]:
        dumped: dict[str, Any] = formats.dump(list(new), "bedrock")
        if dumped.get("system"):
            self.system = [*(self.system or []), *dumped["system"]]
        self.state.extend(dumped["messages"])
        agent = _StrandsAgent(self.state)
        if COUNTER.count_messages(self._request()) >= TRIGGER * self.window:
            self.manager.reduce_context(agent)  # proactive: best-effort, errors swallowed by Strands
        for _ in range(10):  # the provider refuses; the agent reduces and asks again (Strands' PR #3350 bound)
            if COUNTER.count_messages(self._request()) <= self.window:
                break
            try:
                self.manager.reduce_context(agent, RuntimeError("context window overflow"))
            except Exception:  # nothing left to summarize: the request goes over the window
                break
        self.state = agent.messages
        return self._request()


@dataclass
class _StrandsAgent:
    """What `SummarizingConversationManager` reads of its agent when its summary is generated elsewhere."""

    messages: list[Any]


PEERS: dict[str, type[Any]] = {"langchain": LangChain, "langmem": LangMem, "strands": Strands, "zrb": Zrb}


def drive(peer: Peer, cuts: Sequence[tuple[Sequence[Message], int]]) -> list[list[Message]]:
    """Every request of a replay: `cuts` gives the new messages of each request; the answers in order."""

    async def run() -> list[list[Message]]:
        return [await peer.request(new) for new, _ in cuts]

    return asyncio.run(run())


def load_openai(data: Any) -> list[Message]:
    return list(formats.load(data, "openai").messages)
