"""A recorded conversation as a script an agent framework can replay: what each user says, what the model answers
at each step (text, tool calls, several at once) and what each tool returns.

Framework integrations are tested the way the frameworks test themselves, with a fake model, and the fake model needs
something realistic to say. `script_from_messages` turns a recorded conversation (any format chainsum reads, e.g.
one of the shared corpora through `chainsum.testing.iter_documents`) into an `AgentScript`: one `AgentRun` per user
message, each a list of `ModelTurn`s, each turn's `ToolStep`s carrying the arguments the model sent and the output
the tool returned. A framework's test model answers turn after turn; its tools answer with the recorded output. It
imports no framework, so every integration's tests can use it.

Choices where a recording does not map one to one (each keeps the script runnable by an agent loop that stops at
the first answer without tool calls):

- assistant text with no calls before more calls in the same run is carried into the next turn's text (a run
  would otherwise end there); a run whose recording ends on calls gets a closing turn ``"(done)"``;
- a call with no recorded result gets ``"(no output recorded)"``, a result with no text (an image) ``"(empty
  output)"`` (providers refuse empty tool output); results are matched to calls by id, in order (tau-bench reuses
  ids), and only their text is kept;
- ``parallel=k`` merges up to k consecutive call-only turns into one turn of parallel calls, for recordings whose
  model never made parallel calls (tau-bench's gpt-4o runs) but whose shape should be tested with them;
- the system messages become `AgentScript.system` (the agent's instructions).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..messages import Message

__all__ = ["AgentRun", "AgentScript", "ModelTurn", "ToolStep", "concat_scripts", "script_from_messages"]

NO_OUTPUT = "(no output recorded)"
EMPTY_OUTPUT = "(empty output)"
DONE = "(done)"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStep:
    """One tool call the model makes and what the tool returns to it."""

    name: str
    arguments: str
    """The call's arguments as the JSON text the model sent."""
    output: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelTurn:
    """One model response: text, tool calls (several: parallel calls), or both. No calls ends the run."""

    text: str = ""
    calls: tuple[ToolStep, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentRun:
    """One user message and the model turns that answer it (the last one has no calls)."""

    user: str
    turns: tuple[ModelTurn, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentScript:
    """A whole conversation, run after run."""

    label: str
    system: str
    runs: tuple[AgentRun, ...]

    @property
    def tools(self) -> tuple[str, ...]:
        """Every tool name the script calls, in order of first use."""
        seen: dict[str, None] = {}
        for run in self.runs:
            for turn in run.turns:
                for call in turn.calls:
                    seen.setdefault(call.name, None)
        return tuple(seen)

    @property
    def model_calls(self) -> int:
        """Model responses the script holds (one per turn)."""
        return sum(len(run.turns) for run in self.runs)


@dataclass(slots=True)
class _Builder:
    parallel: int
    runs: list[AgentRun]
    user: str | None = None
    turns: list[list[tuple[str, str, list[str | None]]]] | None = None
    texts: list[str] | None = None
    carried: str = ""

    def start(self, user: str) -> None:
        self.finish()
        self.user = user or "(continue)"
        self.turns = []
        self.texts = []
        self.carried = ""

    def assistant(self, message: Message) -> None:
        if self.user is None:
            self.start("(start)")
        assert self.turns is not None and self.texts is not None
        text = message.text.strip()
        calls = message.tool_calls
        if not calls:
            if text:
                self.carried = f"{self.carried}\n\n{text}".strip()
            return
        merge = (
            self.parallel > 1
            and not text
            and not self.carried
            and self.turns
            and not self.texts[-1]
            and len(self.turns[-1]) + len(calls) <= self.parallel
        )
        steps: list[tuple[str, str, list[str | None]]] = [(c.name, c.arguments, [c.id, None]) for c in calls]
        if merge:
            self.turns[-1].extend(steps)
        else:
            self.turns.append(steps)
            self.texts.append(f"{self.carried}\n\n{text}".strip())
            self.carried = ""

    def results(self, message: Message) -> None:
        if not self.turns:
            return
        for result in message.tool_results:
            for _name, _args, slot in self.turns[-1]:
                if slot[0] == result.call_id and slot[1] is None:
                    slot[1] = result.text
                    break

    def finish(self) -> None:
        if self.user is None or self.turns is None or self.texts is None:
            return
        turns = [
            ModelTurn(
                text=text,
                calls=tuple(ToolStep(name=n, arguments=a, output=_output(slot[1])) for n, a, slot in steps),
            )
            for text, steps in zip(self.texts, self.turns, strict=True)
        ]
        turns.append(ModelTurn(text=self.carried or DONE))
        self.runs.append(AgentRun(user=self.user, turns=tuple(turns)))
        self.user = None


def _output(recorded: str | None) -> str:
    return NO_OUTPUT if recorded is None else recorded if recorded.strip() else EMPTY_OUTPUT


def script_from_messages(messages: Sequence[Message], *, label: str = "", parallel: int = 1) -> AgentScript:
    """The script of a recorded conversation (see the module docstring for the choices made)."""
    builder = _Builder(parallel=parallel, runs=[])
    system: list[str] = []
    for message in messages:
        if message.role == "system":
            if message.text.strip():
                system.append(message.text)
        elif message.role == "assistant":
            builder.assistant(message)
        elif message.tool_results:
            builder.results(message)
            if message.role == "user" and message.text.strip():
                builder.start(message.text)
        elif message.role == "user":
            builder.start(message.text)
    builder.finish()
    return AgentScript(label=label, system="\n\n".join(system), runs=tuple(builder.runs))


def concat_scripts(scripts: Iterable[AgentScript], *, label: str = "") -> AgentScript:
    """One long script of several: their runs in order, the first script's instructions."""
    parts = list(scripts)
    if not parts:
        return AgentScript(label=label, system="", runs=())
    runs = tuple(run for script in parts for run in script.runs)
    return AgentScript(label=label or "+".join(s.label for s in parts), system=parts[0].system, runs=runs)
