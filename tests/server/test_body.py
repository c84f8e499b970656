"""`Bodies`: a body parsed against the client's previous one is exactly what parsing it whole gives, whatever the
client changed, however it writes JSON, and whatever it hides in the body (duplicate keys, the previous tools'
text somewhere else); and an agent's growing session is in fact parsed from the little that changed."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import httpx
import orjson
from hypothesis import event, given, settings
from hypothesis import strategies as st

from chainsum.server._body import Bodies, parse_body
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from server.server_support import proxy

PAD = "tool description " * 70
"""Over a kilobyte: a top-level value this large is reused."""


def claude_code_bodies(run: int, requests: int) -> list[bytes]:
    """A Claude Code-shaped session: large tools and system prompt, a tool step a request, the ``cache_control``
    marker on the newest message (moved off the one before)."""
    rng = random.Random(run)
    tools = [{"name": f"T{i}", "description": PAD, "input_schema": {"type": "object"}} for i in range(12)]
    system = [{"type": "text", "text": PAD * 4, "cache_control": {"type": "ephemeral"}}]
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": f"run {run}"}]}]
    out: list[bytes] = []
    for step in range(requests):
        last = json.loads(json.dumps(messages[-1]))
        last["content"][-1]["cache_control"] = {"type": "ephemeral"}
        body = {
            "model": "claude",
            "max_tokens": 9,
            "system": system,
            "tools": tools,
            "messages": [*messages[:-1], last],
        }
        out.append(orjson.dumps(body))
        call = f"toolu_{run}_{step}"
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": call, "name": "T0", "input": {}}]})
        output = "".join(rng.choice('abcdé\n"') for _ in range(rng.randint(500, 3000)))
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": output}]})
    return out


def codex_bodies(run: int, requests: int) -> list[bytes]:
    """A Codex-shaped session (Responses): instructions, tools, reasoning, a call and its output a request."""
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    ]
    out: list[bytes] = []
    for step in range(requests):
        body = {"model": "codex", "instructions": PAD * 8, "input": items, "tools": [{"name": "x", "description": PAD}]}
        out.append(orjson.dumps(body))
        call = f"call_{run}_{step}"
        items = [
            *items,
            {"type": "reasoning", "encrypted_content": "gAAAA" + "x" * 900},
            {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": call},
            {"type": "function_call_output", "call_id": call, "output": PAD * (1 + step % 3)},
        ]
    return out


def _spaced(value: object) -> bytes:
    return json.dumps(value).encode()


def _spaced_utf8(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


def _compact_ascii(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _indented(value: object) -> bytes:
    return json.dumps(value, indent=1).encode()


STYLES: list[Callable[[object], bytes]] = [orjson.dumps, _spaced, _spaced_utf8, _compact_ascii, _indented]

_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=10),
    st.sampled_from(['"tools":', "\\u0000", "é", "\n", '{"role":"user"}']),
)
_value: st.SearchStrategy[object] = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def _message(role: str, content: object, marked: bool) -> dict[str, Any]:
    return {"role": role, "content": content, **({"cache_control": {"type": "x"}} if marked else {})}


_item = st.builds(_message, st.sampled_from(["user", "assistant", "system"]), _value, st.booleans())


@st.composite
def _first(draw: st.DrawFn) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "m",
        "tools": [{"name": "t", "description": PAD}, *draw(st.lists(_value, max_size=2))],
        "system": PAD + draw(st.text(max_size=5)),
        "messages": draw(st.lists(_item, min_size=1, max_size=5)),
        **draw(st.dictionaries(st.sampled_from(["metadata", "max_tokens", "stream"]), _value, max_size=2)),
    }
    keys = draw(st.permutations(list(body)))
    return {k: body[k] for k in keys}


@st.composite
def _next(draw: st.DrawFn, last: dict[str, Any]) -> dict[str, Any]:
    """The client's next body: usually `last` grown by a step with its marker moved, sometimes anything else."""
    body = json.loads(json.dumps(last))
    items: list[Any] = body["messages"]
    step = st.just(["marker", "grow"])  # an agent's step, as most requests are
    anything = st.lists(st.sampled_from(["grow", "marker", "edit", "cut", "tools", "nest", "order", "drop"]))
    for op in draw(step | anything):
        if op == "grow":
            items += draw(st.lists(_item, min_size=1, max_size=3))
        elif op == "marker" and items:
            items[-1] = {k: v for k, v in items[-1].items() if k != "cache_control"}
        elif op == "edit" and items:
            items[draw(st.integers(0, len(items) - 1))] = draw(_item)
        elif op == "cut":
            del items[draw(st.integers(0, len(items))) :]
        elif op == "tools":
            body["tools"] = [*body.get("tools", []), draw(_value)]
        elif op == "nest":  # the previous tools' text inside a message, the real ones changed
            items.append({"role": "user", "content": last.get("tools")})
            body["tools"] = [{"name": "other", "description": PAD}]
        elif op == "order":
            keys = draw(st.permutations(list(body)))
            body = {k: body[k] for k in keys}
        elif op == "drop" and len(body) > 1:
            body.pop(draw(st.sampled_from(sorted(k for k in body if k != "messages"))))
    body["messages"] = items
    return body


def _write(data: st.DataObject, body: dict[str, Any], dump: Callable[[object], bytes]) -> bytes:
    """`body` as `dump` writes it (now and then another way: a client changing its writing); sometimes with a
    duplicate key after everything, where the last one is the one that counts."""
    if data.draw(st.integers(0, 9)) == 0:
        dump = data.draw(st.sampled_from(STYLES))
    raw = dump(body)
    if data.draw(st.integers(0, 5)) == 0:
        key = data.draw(st.sampled_from(["tools", "messages", "system", "model"]))
        value = data.draw(st.sampled_from([[], "x", body.get(key)]))
        raw = raw[:-1] + b',"' + key.encode() + b'":' + orjson.dumps(value) + b"}"
    return raw


def _same(got: dict[str, Any], want: dict[str, Any]) -> bool:
    """Equal, with keys in the same order (what is written back upstream after a compaction follows it)."""
    return got == want and json.dumps(got) == json.dumps(want)


@given(st.data())
@settings(max_examples=300)
def test_a_body_read_against_the_last_one_is_what_a_fresh_parse_gives(data: st.DataObject) -> None:
    bodies = Bodies(min_body=0)
    body = data.draw(_first())
    dump = data.draw(st.sampled_from(STYLES))
    for _ in range(3):
        raw = _write(data, body, dump)
        before = bodies.reused
        assert _same(bodies.parse(raw, ("c",), "messages"), parse_body(raw))
        event(f"reused={bodies.reused > before}")
        body = data.draw(_next(body))


def _styled(bodies: list[bytes], dump: Callable[[object], bytes]) -> list[bytes]:
    return [dump(orjson.loads(raw)) for raw in bodies]


def test_an_agent_session_is_read_from_what_each_step_added() -> None:
    """Claude Code-shaped and Codex-shaped sessions, written compact (JSON.stringify, serde_json) or as
    ``json.dumps`` writes: each body reuses the last one's tools, system prompt and history items but the newest
    (from the third Claude Code body on: the second one moved the marker off the only message there was)."""
    for make, history in ((claude_code_bodies, "messages"), (codex_bodies, "input")):
        for dump in (orjson.dumps, _spaced):
            bodies = Bodies(min_body=1_000)
            last: dict[str, Any] = {}
            for n, raw in enumerate(_styled(make(1, requests=8), dump)):
                before = bodies.reused
                body = bodies.parse(raw, ("c",), history)
                assert _same(body, orjson.loads(raw))
                reusing = n >= (2 if history == "messages" else 1)
                assert (bodies.reused > before) == reusing, (make.__name__, dump.__name__, n)
                if reusing:  # the very objects of the last request: compared downstream by identity
                    assert body["tools"] is last["tools"]
                    kept = len(last[history]) - 1
                    assert all(a is b for a, b in zip(body[history][:kept], last[history][:kept], strict=True))
                last = body


def test_what_cannot_be_reused_is_read_whole() -> None:
    """An edited early message, a client written with indentation, another client's slot: read whole, right."""
    raws = _styled(claude_code_bodies(2, requests=4), orjson.dumps)
    bodies = Bodies()
    bodies.parse(raws[0], ("a",), "messages")
    edited = orjson.loads(raws[1])
    edited["messages"][0]["content"][0]["text"] = "changed"
    raw = orjson.dumps(edited)
    assert _same(bodies.parse(raw, ("a",), "messages"), edited)
    assert bodies.parse(raws[2], ("b",), "messages") == orjson.loads(raws[2])
    indented = [json.dumps(orjson.loads(r), indent=2).encode() for r in raws]
    for raw in indented:
        assert bodies.parse(raw, ("c",), "messages") == orjson.loads(raw)
    assert bodies.reused == 0


def test_a_client_idle_past_the_session_idle_time_is_forgotten() -> None:
    """Its body leaves memory with its session: the next one is parsed whole."""
    now = [0.0]
    bodies = Bodies(min_body=0, idle_s=600, clock=lambda: now[0])
    raws = claude_code_bodies(5, requests=4)
    for raw in raws[:3]:
        bodies.parse(raw, ("a",), "messages")
    assert bodies.reused == 1 and len(bodies) == 1
    now[0] = 601.0
    assert bodies.parse(raws[3], ("b",), "messages") == orjson.loads(raws[3])
    assert len(bodies) == 1  # "a" left; "b" is kept
    assert bodies.reused == 1


def test_duplicate_key_after_a_reused_run_counts_as_a_fresh_parse_counts_it() -> None:
    raws = _styled(claude_code_bodies(3, requests=3), orjson.dumps)
    bodies = Bodies()
    bodies.parse(raws[0], ("a",), "messages")
    for key in ("tools", "messages", "system"):
        raw = raws[1][:-1] + b',"' + key.encode() + b'":[]}'
        fresh = Bodies()
        fresh.parse(raws[0], ("a",), "messages")
        assert _same(fresh.parse(raw, ("a",), "messages"), orjson.loads(raw))


def test_the_proxy_sends_each_body_as_it_came_and_reads_it_from_the_last(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    raws = claude_code_bodies(4, requests=6)
    headers = {"content-type": "application/json", "x-api-key": "k", "X-Chainsum-Context-Window": "200000"}
    with proxy(fake, store) as p, httpx.Client(base_url=p.url, timeout=30) as client:
        for raw in raws:
            r = client.post("/v1/messages", content=raw, headers=headers)
            assert r.status_code == 200, r.text
            assert r.headers["x-chainsum-summarized"] == "false"
            assert fake.requests[-1].raw == raw
        # all but the first two (the second moved the marker off the only message the first had)
        assert p.app.state.chainsum.bodies.reused == len(raws) - 2


def test_the_bodies_kept_stay_within_their_bytes() -> None:
    """The least recently used clients' bodies leave once the bytes kept pass `max_bytes`; the newest client's stays
    and is reused, and the count follows every way a body leaves (replaced, pushed out, idle)."""
    now = [0.0]
    raws = claude_code_bodies(6, requests=4)
    size = len(raws[0])
    bodies = Bodies(min_body=0, max_bytes=3 * size, clock=lambda: now[0], idle_s=600)
    for client in "abcde":
        bodies.parse(raws[0], (client,), "messages")
        assert bodies.kept_bytes <= 3 * size
    assert len(bodies) == 3 and bodies.kept_bytes == 3 * size
    bodies.parse(raws[1], ("e",), "messages")  # replaces e's body, pushes c's out: bigger
    assert len(bodies) == 2 and bodies.kept_bytes == size + len(raws[1])
    assert bodies.parse(raws[2], ("e",), "messages") == orjson.loads(raws[2])
    assert bodies.reused == 1  # e's previous body was kept
    now[0] = 601.0
    bodies.parse(raws[3], ("f",), "messages")
    assert len(bodies) == 1 and bodies.kept_bytes == len(raws[3])
