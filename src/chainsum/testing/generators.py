"""The chain spec's test-chain generators and predefined chains, shipped so users can test code that handles
chains without writing conversations by hand. Everything here is deterministic."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

from ..chain import BodyPair
from ..messages import Message, Text, ToolCall, ToolResult

__all__ = [
    "PREDEFINED",
    "ChainConfig",
    "generate_chain",
    "generate_complex_chain",
    "generate_large_chain",
]


def _ints() -> list[int]:
    return []


def _bools() -> list[bool]:
    return []


@dataclass(frozen=True, slots=True)
class ChainConfig:
    """What `generate_chain` builds. Per-pair lists are indexed by the running pair number across sections;
    missing entries mean 1 pair per section, no tools, and 1 call per tool-using pair."""

    include_system: bool = True
    sections: int = 1
    body_pairs_per_section: list[int] = field(default_factory=_ints)
    tools_for_body_pairs: list[bool] = field(default_factory=_bools)
    tool_calls_per_body_pair: list[int] = field(default_factory=_ints)
    include_all_tool_responses: bool = True


def _call(n: int, k: int) -> ToolCall:
    return ToolCall(id=f"call_{n}_{k}", name=f"tool_{k}", arguments=json.dumps({"query": f"q{n}.{k}"}))


def _result(call: ToolCall) -> Message:
    return Message(role="tool", parts=(ToolResult(call_id=call.id, name=call.name, content=f"result of {call.id}"),))


def generate_chain(config: ChainConfig | None = None) -> list[Message]:
    """A chain shaped by `config` (the default: system, human, one assistant answer)."""
    config = config or ChainConfig()
    out: list[Message] = []
    if config.include_system:
        out.append(Message.of("system", "You are a helpful assistant."))
    pair_no = 0
    for s in range(config.sections):
        out.append(Message.of("user", f"Question {s + 1}"))
        pairs = config.body_pairs_per_section[s] if s < len(config.body_pairs_per_section) else 1
        for _ in range(pairs):
            tools = pair_no < len(config.tools_for_body_pairs) and config.tools_for_body_pairs[pair_no]
            if tools:
                count = (
                    config.tool_calls_per_body_pair[pair_no] if pair_no < len(config.tool_calls_per_body_pair) else 1
                )
                calls = [_call(pair_no, k) for k in range(count)]
                out.append(Message(role="assistant", parts=(Text(text="Let me check."), *calls)))
                if config.include_all_tool_responses:
                    out.extend(_result(c) for c in calls)
            else:
                out.append(Message.of("assistant", f"Answer {pair_no + 1}"))
            pair_no += 1
    return out


def generate_complex_chain(sections: int, tool_calls_per_pair: int, missing_responses: int) -> list[Message]:
    """Sections each with a tool-using pair and a final answer, then `missing_responses` results removed (the
    latest first), for testing repair."""
    out: list[Message] = [Message.of("system", "You are a helpful assistant.")]
    for s in range(sections):
        out.append(Message.of("user", f"Task {s + 1}"))
        calls = [_call(s, k) for k in range(tool_calls_per_pair)]
        out.append(Message(role="assistant", parts=tuple(calls)))
        out.extend(_result(c) for c in calls)
        out.append(Message.of("assistant", f"Done with task {s + 1}"))
    removed = 0
    for i in range(len(out) - 1, -1, -1):
        if removed >= missing_responses:
            break
        if out[i].role == "tool":
            del out[i]
            removed += 1
    return out


def generate_large_chain(messages: int, *, seed: int = 0, text_bytes: int = 2000) -> list[Message]:
    """A long agent conversation of about `messages` messages: sections of a human request followed by several
    tool round trips (with parallel calls) and a final answer. Tool results are the bulk, as in real agents."""
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "path/to/file.py", "42ms", "v1.2.3", "ERROR", "user_id=17", "ok"]

    def text(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(max(1, n // 6)))

    out: list[Message] = [Message.of("system", "You are a coding agent. " + text(400))]
    s = 0
    while len(out) < messages:
        out.append(Message.of("user", f"Request {s}: " + text(200)))
        for turn in range(rng.randint(1, 6)):
            width = rng.choice((1, 1, 1, 2, 3))
            calls = [
                ToolCall(
                    id=f"call_{s}_{turn}_{k}",
                    name=rng.choice(("read", "grep", "bash")),
                    arguments=json.dumps({"arg": text(60)}),
                )
                for k in range(width)
            ]
            out.append(Message(role="assistant", parts=(Text(text=text(150)), *calls)))
            for c in calls:
                out.append(
                    Message(
                        role="tool",
                        parts=(ToolResult(call_id=c.id, name=c.name, content=text(rng.randint(200, text_bytes * 2))),),
                    )
                )
        out.append(Message.of("assistant", "Done: " + text(300)))
        s += 1
    return out


def _sys() -> Message:
    return Message.of("system", "You are a helpful assistant.")


def _human(text: str = "Hello") -> Message:
    return Message.of("user", text)


def _ai(text: str = "Hi there") -> Message:
    return Message.of("assistant", text)


_CALL = ToolCall(id="call_1", name="get_weather", arguments='{"city": "Paris"}')
_CALL2 = ToolCall(id="call_2", name="get_time", arguments='{"tz": "CET"}')


def _tool(call: ToolCall, content: str = "sunny") -> Message:
    return Message(role="tool", parts=(ToolResult(call_id=call.id, name=call.name, content=content),))


def _summary_pair() -> list[Message]:
    return BodyPair.from_summarization("Earlier we discussed the weather in Paris.", "call_summary1").messages()


PREDEFINED: dict[str, list[Message]] = {
    "empty": [],
    "system_only": [_sys()],
    "human_only": [_human()],
    "system_human": [_sys(), _human()],
    "basic_conversation": [_sys(), _human(), _ai()],
    "with_tool": [_sys(), _human(), Message(role="assistant", parts=(_CALL,))],
    "with_single_tool_response": [_sys(), _human(), Message(role="assistant", parts=(_CALL,)), _tool(_CALL)],
    "with_multiple_tools": [_sys(), _human(), Message(role="assistant", parts=(_CALL, _CALL2))],
    "with_multiple_tool_responses": [
        _sys(),
        _human(),
        Message(role="assistant", parts=(_CALL, _CALL2)),
        _tool(_CALL),
        _tool(_CALL2, "12:00"),
    ],
    "with_multiple_sections": [_sys(), _human(), _ai(), _human("And tomorrow?"), _ai("Rain.")],
    "with_consecutive_humans": [_sys(), _human(), _human("Are you there?"), _ai()],
    "with_missing_tool_response": [
        _sys(),
        _human(),
        Message(role="assistant", parts=(_CALL, _CALL2)),
        _tool(_CALL),
        _human("next"),
    ],
    "with_unexpected_tool": [_sys(), _human(), _tool(_CALL), _ai()],
    "with_summarization": [_sys(), _human(), *_summary_pair()],
    "with_summarization_and_other_pairs": [_sys(), _human(), *_summary_pair(), _ai("Anything else?")],
}
"""The spec's predefined chains, by name (the Go names without ``chainWith``)."""
