"""Hypothesis strategies for canonical message lists, shared by every test package.

- `well_formed_histories()`: valid for every provider (leading system, user first, every call answered right
  after its assistant message, ids unique per message and reused across turns as tau-bench does, no blank
  text, signed reasoning only, assistant and user turns alternating).
- `malformed_histories()`: realistic defects stitched together: orphan results, missing results, results
  displaced past a user message, duplicated / empty / over-long / bad-character ids, results paired by name,
  consecutive same roles, system messages mid-chain, empty and blank content, user tool calls with their results
  (tau2-bench), leading assistant or tool messages, Opaque blocks of every format, unsigned reasoning.
- `noise_histories()`: arbitrary roles with arbitrary parts.
- `histories()`: any of the three.
- `identifier_histories()`: well-formed chats and agent runs of realistic length whose text and tool output name
  identifiers (order ids, paths, snake_case fields, dates, amounts): what the retention properties count.

Import as ``from generators import ...`` (``tests/`` must be on ``sys.path``).
"""

from __future__ import annotations

import json
import string

from hypothesis import strategies as st

from chainsum.messages import ROLES, File, Image, Message, Opaque, Part, Reasoning, Role, Text, ToolCall, ToolResult
from chainsum.testing import ChainConfig

__all__ = [
    "any_parts",
    "bad_ids",
    "chain_configs",
    "histories",
    "identifier_histories",
    "malformed_histories",
    "noise_histories",
    "nonblank_texts",
    "texts",
    "tool_ids",
    "valid_ids",
    "well_formed_histories",
]

_WORDS = string.ascii_letters + string.digits + " .,!?é中"
_ID_CHARS = string.ascii_letters + string.digits + "_-"

nonblank_texts = st.text(_WORDS, min_size=1, max_size=24).filter(lambda s: bool(s.strip()))
"""Text with at least one visible character."""
blank_texts = st.sampled_from(["", " ", "\n", " \t "])
texts = st.one_of(nonblank_texts, nonblank_texts, nonblank_texts, blank_texts)
"""Mostly visible text, sometimes empty or whitespace only."""

valid_ids = st.one_of(
    st.sampled_from(["call_1", "call_2", "toolu_01A", "x", "id-9"]),  # a small pool, so ids recur across turns
    st.text(_ID_CHARS, min_size=1, max_size=16),
)
"""Ids every provider accepts: ``[a-zA-Z0-9_-]{1,16}``."""
bad_ids = st.sampled_from(["", "call.1", "call 2", "id/x", "ü-id", "x" * 41, "y" * 70])
"""Ids some provider rejects: empty, bad characters, longer than OpenAI's 40 or Bedrock's 64."""
tool_ids = st.one_of(valid_ids, valid_ids, bad_ids)

tool_names = st.sampled_from(["get_weather", "search", "toggle_airplane_mode", "read_file"])
arguments = st.one_of(
    st.just("{}"),
    st.dictionaries(st.sampled_from(["q", "on", "path"]), st.one_of(st.booleans(), st.integers(0, 9)), max_size=2).map(
        json.dumps
    ),
)

signed_reasoning = st.builds(Reasoning, text=nonblank_texts, signature=st.sampled_from(["sig-a", "c2lnbmF0dXJl"]))
reasoning = st.builds(
    Reasoning,
    text=texts,
    signature=st.sampled_from([None, "", "sig"]),
    data=st.sampled_from([None, None, "ZW5jcnlwdGVk"]),
)
"""Signed, redacted, or neither (which Anthropic and Bedrock reject)."""

opaque = st.builds(
    Opaque,
    format=st.sampled_from(["anthropic", "claude-code", "openai", "openai-responses", "gemini", "bedrock"]),
    data=st.sampled_from([{"type": "server_tool_use", "id": "srvtoolu_1"}, {"type": "web_search_call"}, {"x": 1}]),
)
images = st.builds(Image, url=st.just("https://example.com/a.png"), media_type=st.just("image/png"))
files = st.builds(File, data=st.just(b"%PDF-1.4"), media_type=st.just("application/pdf"), name=st.just("a.pdf"))

result_content = st.one_of(
    texts,
    st.lists(st.one_of(st.builds(Text, text=texts), images), min_size=0, max_size=2).map(tuple),
)


def tool_calls(ids: st.SearchStrategy[str] = tool_ids) -> st.SearchStrategy[ToolCall]:
    return st.builds(ToolCall, id=ids, name=tool_names, arguments=arguments)


def _result_for(call: ToolCall, content: str | tuple[Text | Image, ...], is_error: bool) -> Message:
    return Message(
        role="tool", parts=(ToolResult(call_id=call.id, name=call.name, content=content, is_error=is_error),)
    )


@st.composite
def well_formed_histories(draw: st.DrawFn, max_turns: int = 5) -> list[Message]:
    """A history every provider accepts as it is."""
    out: list[Message] = []
    if draw(st.booleans()):
        out.append(Message.of("system", draw(nonblank_texts)))
    for _ in range(draw(st.integers(1, max_turns))):
        user_parts: list[Part] = [Text(text=draw(nonblank_texts))]
        if draw(st.integers(0, 4)) == 0:
            user_parts.append(draw(st.one_of(images, files)))
        out.append(Message(role="user", parts=tuple(user_parts)))
        for _ in range(draw(st.integers(0, 2))):
            ids = draw(st.lists(valid_ids, min_size=1, max_size=3, unique=True))
            calls = [ToolCall(id=i, name=draw(tool_names), arguments=draw(arguments)) for i in ids]
            parts: list[Part] = []
            if draw(st.booleans()):
                parts.append(draw(signed_reasoning))
            if draw(st.booleans()):
                parts.append(Text(text=draw(nonblank_texts)))
            out.append(Message(role="assistant", parts=(*parts, *calls)))
            for call in draw(st.permutations(calls)):
                is_error = draw(st.booleans())
                content = draw(nonblank_texts) if is_error else draw(st.one_of(st.just(""), nonblank_texts))
                out.append(_result_for(call, content, is_error))
        out.append(Message.of("assistant", draw(nonblank_texts)))
    return out


@st.composite
def _assistant_exchange(draw: st.DrawFn) -> list[Message]:
    """An assistant message with calls and a defective set of results."""
    calls = draw(st.lists(tool_calls(), min_size=1, max_size=3))
    if draw(st.booleans()) and calls:  # an id repeated within the message
        calls.append(ToolCall(id=calls[0].id, name=draw(tool_names), arguments="{}"))
    head: list[Part] = []
    if draw(st.booleans()):
        head.append(Text(text=draw(texts)))
    if draw(st.integers(0, 3)) == 0:
        head.append(draw(st.one_of(reasoning, opaque)))
    out = [Message(role="assistant", parts=(*head, *calls))]
    results: list[Message] = []
    for call in calls:
        match draw(st.integers(0, 5)):
            case 0:  # missing
                continue
            case 1:  # paired by name, no id
                part = ToolResult(call_id="", name=call.name, content=draw(result_content))
                results.append(Message(role="tool", parts=(part,)))
            case 2:  # answered twice
                results += [_result_for(call, draw(result_content), False)] * 2
            case _:
                results.append(_result_for(call, draw(result_content), draw(st.booleans())))
    if draw(st.booleans()):  # an orphan among them
        results.append(_result_for(ToolCall(id=draw(tool_ids), name="ghost"), draw(texts), False))
    results = list(draw(st.permutations(results)))
    if results and draw(st.integers(0, 3)) == 0:  # some results displaced past a user or system message
        cut = draw(st.integers(0, len(results)))
        results.insert(cut, Message.of(draw(st.sampled_from(["user", "system"])), draw(texts)))
    if len(results) >= 2 and draw(st.integers(0, 4)) == 0:  # two results in one tool message (Anthropic-style)
        results[:2] = [Message(role="tool", parts=results[0].parts + results[1].parts)]
    if results and draw(st.integers(0, 5)) == 0:  # a tool message holding more than results
        extra = draw(st.one_of(st.builds(Text, text=texts), reasoning, images))
        results[-1] = Message(role=results[-1].role, parts=(*results[-1].parts, extra))
    return out + results


@st.composite
def _user_calls(draw: st.DrawFn) -> list[Message]:
    """tau2-bench: the simulated user runs tools; their results follow as tool messages."""
    calls = draw(st.lists(tool_calls(valid_ids), min_size=1, max_size=2))
    parts: list[Part] = [Text(text=draw(nonblank_texts))] if draw(st.booleans()) else []
    out = [Message(role="user", parts=(*parts, *calls))]
    for call in calls:
        if draw(st.integers(0, 3)):
            out.append(_result_for(call, draw(result_content), draw(st.booleans())))
    return out


def _message(role: Role, parts: st.SearchStrategy[list[Part]]) -> st.SearchStrategy[Message]:
    return parts.map(lambda ps: Message(role=role, parts=tuple(ps)))


any_parts = st.lists(
    st.one_of(
        st.builds(Text, text=texts),
        reasoning,
        opaque,
        images,
        tool_calls(),
        st.builds(ToolResult, call_id=tool_ids, name=st.one_of(st.none(), tool_names), content=result_content),
    ),
    max_size=3,
)
"""Any parts at all, of any kind."""

roles: st.SearchStrategy[Role] = st.sampled_from(ROLES)


def _alone(message: Message) -> list[Message]:
    return [message]


def _system(text: str) -> list[Message]:
    return [Message.of("system", text)]


def _stray(call: ToolCall) -> list[Message]:
    return [_result_for(call, "stray", False)]


def _bare(role: Role) -> list[Message]:
    return [Message(role=role)]


def _noise(role: Role, parts: list[Part]) -> Message:
    return Message(role=role, parts=tuple(parts))


_segments = st.one_of(
    _message("user", st.lists(st.one_of(st.builds(Text, text=texts), images, opaque), max_size=2)).map(_alone),
    _message("assistant", st.lists(st.one_of(st.builds(Text, text=texts), reasoning, opaque), max_size=2)).map(_alone),
    _assistant_exchange(),
    _assistant_exchange(),
    _user_calls(),
    texts.map(_system),
    tool_calls().map(_stray),
    roles.map(_bare),
)


@st.composite
def malformed_histories(draw: st.DrawFn, max_segments: int = 7) -> list[Message]:
    """Segments with realistic defects, in any order (so leading assistant or tool messages, consecutive
    same roles and mid-chain system messages all occur)."""
    out: list[Message] = []
    if draw(st.booleans()):
        out.append(Message.of("system", draw(texts)))
    for segment in draw(st.lists(_segments, max_size=max_segments)):
        out.extend(segment)
    return out


noise_histories = st.lists(st.builds(_noise, roles, any_parts), max_size=8)
"""Arbitrary roles holding arbitrary parts."""


def histories() -> st.SearchStrategy[list[Message]]:
    """Well-formed, malformed or noise."""
    return st.one_of(well_formed_histories(), malformed_histories(), malformed_histories(), noise_histories)


def chain_configs(*, complete: bool | None = None) -> st.SearchStrategy[ChainConfig]:
    """Configurations for `chainsum.testing.generate_chain` (the chain spec's generator); `complete` fixes
    whether every tool call gets its response (None: either)."""
    return st.builds(
        ChainConfig,
        include_system=st.booleans(),
        sections=st.integers(1, 6),
        body_pairs_per_section=st.lists(st.integers(1, 4), max_size=6),
        tools_for_body_pairs=st.lists(st.booleans(), max_size=24),
        tool_calls_per_body_pair=st.lists(st.integers(1, 3), max_size=24),
        include_all_tool_responses=st.booleans() if complete is None else st.just(complete),
    )


_FILLER = (
    "I checked that again and it looks fine to me. ",
    "Thanks, that helps a lot with what I was trying to do. ",
    "Let me know if anything else comes up on your side. ",
    "We went over the details earlier and agreed on the plan. ",
)
_IDENTIFIER = st.one_of(
    st.integers(1000, 9999).map(lambda n: f"ORD-{n}"),
    st.integers(0, 99).map(lambda n: f"src/app/module_{n}.py"),
    st.sampled_from(["account_id", "line_items", "payment_method", "contract_end", "retry_count", "device_id"]),
    st.integers(100, 99999).map(str),
    st.dates().map(lambda d: d.isoformat()),
    st.integers(1, 900).map(lambda n: f"{n} ms"),
)


@st.composite
def _prose(draw: st.DrawFn, max_sentences: int = 6) -> str:
    """A few sentences of filler with identifiers planted among them."""
    out: list[str] = []
    for _ in range(draw(st.integers(1, max_sentences))):
        out.append(draw(st.sampled_from(_FILLER)))
        if draw(st.booleans()):
            out.append(f"It concerns {draw(_IDENTIFIER)} and {draw(_IDENTIFIER)}. ")
    return "".join(out).strip()


@st.composite
def identifier_histories(draw: st.DrawFn, max_turns: int = 14) -> list[Message]:
    """A system prompt, then turns of a user asking, sometimes an assistant running tools (their output a JSON
    record or a listing naming identifiers, some of it long), and an assistant answering."""
    out = [Message.of("system", "You are a support agent. Look things up before you answer.")]
    calls = 0
    for _ in range(draw(st.integers(3, max_turns))):
        out.append(Message.of("user", draw(_prose())))
        for _ in range(draw(st.integers(0, 2))):
            calls += 1
            call = ToolCall(id=f"call_{calls}", name=draw(tool_names), arguments=json.dumps({"q": draw(_IDENTIFIER)}))
            out.append(Message(role="assistant", parts=(call,)))
            fields = draw(st.lists(st.tuples(_IDENTIFIER, _IDENTIFIER), min_size=1, max_size=12))
            output = json.dumps(dict(fields)) + " " + draw(_prose(3)) * draw(st.integers(0, 8))
            out.append(_result_for(call, output, False))
        out.append(Message.of("assistant", draw(_prose())))
    return out
