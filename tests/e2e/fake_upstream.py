"""`FakeUpstream`: a scripted model provider on 127.0.0.1 that plays the agent of `agent_script` for one client.

It answers ``POST /v1/messages`` (Anthropic), ``POST /v1/responses`` and ``POST /v1/chat/completions`` (OpenAI),
streaming as the provider streams (`wire_sse`), and records every request it receives, body and headers, so a test
can check each one with its own validity checker (`wire_checks`) after the run.

Each answer is decided from the request alone, as a model would: the highest step number named in it
(`agent_script.last_step_in`) is the step just run, so the answer asks for the next one, and the final answer
comes after the last step. A request is one of three kinds (`Received.kind`): ``main`` (the agent loop: its tools
include the persona's shell tool), ``compact`` (the client compacting its own history: its newest user text
holds the persona's compaction prompt; the fake answers with a summary naming the last step), or ``side`` (anything
else a client asks on the way, answered with a short text).

A client's own compaction is driven by the usage it is told: with `Persona.high_usage_at` set, the answer that
asks for that step reports `Persona.high_usage` input tokens, once, so the client compacts before its next turn.

Why the standard library's threading server and not aiohttp: the tests drive the clients as subprocesses from
synchronous code, and a server thread per connection needs no event loop beside them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal, TypeAlias, cast

from e2e.agent_script import (
    FINAL_ANSWER,
    STEPS,
    Step,
    call_id,
    encrypted_reasoning,
    last_step_in,
    signature,
    step,
    thinking_text,
)
from e2e.wire_sse import Answer, Call, anthropic_stream, chat_stream, responses_stream

__all__ = ["FakeUpstream", "Kind", "Persona", "Received", "Route"]

Route: TypeAlias = Literal["messages", "responses", "chat"]
Kind: TypeAlias = Literal["main", "compact", "side"]

_ROUTES: dict[str, Route] = {
    "/v1/messages": "messages",
    "/v1/responses": "responses",
    "/v1/chat/completions": "chat",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Persona:
    """How the agent speaks to one client: its route, its shell tool and the arguments that tool takes."""

    route: Route
    tool_name: str
    arguments: Callable[[Step], dict[str, Any] | str]
    """The call's JSON arguments, or a custom tool's free-form input (a string)."""
    id_prefix: str
    """Call ids in the provider's style: ``toolu_`` (Anthropic), ``call_`` (OpenAI)."""
    reasoning: bool = True
    """Answer with a signed thinking block / a reasoning item with ``encrypted_content`` before each call."""
    compact_prompt: str | None = None
    """A phrase of the client's own compaction request (its newest user text), when the client has one."""
    high_usage_at: int | None = None
    """The step whose answer reports `high_usage` input tokens (once), to make the client compact itself."""
    high_usage: int = 0


@dataclass(frozen=True, slots=True)
class Received:
    """One request the upstream received."""

    route: Route | None
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    kind: Kind
    answered: int
    """The step the answer asked for (`agent_script.STEPS` + 1 for the final answer; 0 for a side request)."""
    usage: int
    """The input tokens the answer reported."""


@dataclass(eq=False)
class FakeUpstream:
    """See the module docstring. Use as a context manager; `base_url` is ``http://127.0.0.1:<port>``."""

    persona: Persona
    received: list[Received] = field(default_factory=list[Received])
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _high_usage_sent: bool = False
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the fake upstream first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeUpstream:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return

            def do_GET(self) -> None:
                fake._record(self.path, dict(self.headers.items()), {}, None, "side", 0, 0)
                self._json(404, {"error": {"type": "not_found_error", "message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                body = cast(dict[str, Any], json.loads(raw))
                route = _ROUTES.get(self.path.split("?", 1)[0])
                if route is None:
                    fake._record(self.path, dict(self.headers.items()), body, None, "side", 0, 0)
                    self._json(404, {"error": {"type": "not_found_error", "message": f"no route {self.path}"}})
                    return
                answer, kind = fake._decide(route, body, raw.decode())
                fake._record(
                    self.path, dict(self.headers.items()), body, route, kind, answer.number, answer.input_tokens
                )
                model = str(body.get("model", ""))
                if not body.get("stream"):
                    self._json(200, _whole(route, answer, model))
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in _stream(route, answer, model):
                    self.wfile.write(chunk)
                    self.wfile.flush()
                self.close_connection = True

            def _json(self, status: int, payload: object) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-upstream", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # what was received ----------------------------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        """Every request received, as JSON (a failed test's evidence: it stays in the test's directory)."""
        with self._lock:
            rows = [
                {"path": r.path, "kind": r.kind, "answered": r.answered, "headers": r.headers, "body": r.body}
                for r in self.received
            ]
        path.write_text(json.dumps(rows, ensure_ascii=False))

    def of_kind(self, *kinds: Kind) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.kind in kinds and r.route == self.persona.route]

    def _record(
        self,
        path: str,
        headers: dict[str, str],
        body: dict[str, Any],
        route: Route | None,
        kind: Kind,
        answered: int,
        usage: int,
    ) -> None:
        with self._lock:
            self.received.append(Received(route, path, headers, body, kind, answered, usage))

    # what to answer -------------------------------------------------------------------------------------------------
    def _decide(self, route: Route, body: dict[str, Any], raw: str) -> tuple[Answer, Kind]:
        persona = self.persona
        usage = max(1_000, len(raw) // 4)
        if route != persona.route:
            return Answer(0, "This fake upstream answers another route.", input_tokens=usage), "side"
        done = last_step_in(raw)
        if persona.compact_prompt is not None and persona.compact_prompt in _newest_user_text(route, body):
            summary = (
                "<analysis>The user asked for a scripted series of shell commands.</analysis>\n<summary>\n"
                f"1. Primary Request: run the scripted commands, one per turn, {STEPS} in all.\n"
                f"2. Progress: every step up to E2E-STEP-{done:02d} has run; its output was read.\n"
                f"3. Next Step: run step {done + 1}.\n</summary>"
            )
            return Answer(done, summary, input_tokens=usage), "compact"
        if persona.tool_name not in _tool_names(route, body):
            return Answer(0, "ok", input_tokens=usage), "side"
        number = done + 1
        if number > STEPS:
            return Answer(number, FINAL_ANSWER, input_tokens=usage), "main"
        if number == persona.high_usage_at:
            with self._lock:
                if not self._high_usage_sent:
                    self._high_usage_sent = True
                    usage = persona.high_usage
        the_step = step(number)
        token = (signature if route == "messages" else encrypted_reasoning)(number)
        return (
            Answer(
                number,
                f"Running step {number}.",
                Call(call_id(persona.id_prefix, number), persona.tool_name, persona.arguments(the_step)),
                reasoning=thinking_text(number) if persona.reasoning and route != "chat" else None,
                reasoning_token=token,
                input_tokens=usage,
            ),
            "main",
        )


def _stream(route: Route, answer: Answer, model: str) -> Iterator[bytes]:
    match route:
        case "messages":
            return anthropic_stream(answer, model)
        case "responses":
            return responses_stream(answer, model)
        case "chat":
            return chat_stream(answer, model)


def _whole(route: Route, answer: Answer, model: str) -> dict[str, Any]:
    """A non-streaming answer (text only: the clients stream their agent turns; this serves side requests)."""
    match route:
        case "messages":
            return {
                "id": "msg_e2e_side",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": answer.text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": answer.input_tokens, "output_tokens": 5},
            }
        case "responses":
            return {
                "id": "resp_e2e_side",
                "object": "response",
                "status": "completed",
                "model": model,
                "output": [
                    {
                        "type": "message",
                        "id": "msg_e2e_side",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": answer.text, "annotations": []}],
                    }
                ],
                "usage": {"input_tokens": answer.input_tokens, "output_tokens": 5, "total_tokens": answer.input_tokens},
            }
        case "chat":
            return {
                "id": "chatcmpl-e2e-side",
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": model,
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": answer.text}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": answer.input_tokens, "completion_tokens": 5, "total_tokens": 0},
            }


def _tool_names(route: Route, body: dict[str, Any]) -> set[str]:
    """The tools a request offers: its ``tools``, and on the Responses route the tools its ``additional_tools``
    input items declare (Codex's catalog models), namespaces walked into."""
    tools = cast(list[dict[str, Any]], body.get("tools") or [])
    if route == "responses":
        for item in cast(list[Any], body.get("input") if isinstance(body.get("input"), list) else []):
            if isinstance(item, dict) and cast(dict[str, Any], item).get("type") == "additional_tools":
                tools = [*tools, *cast(list[dict[str, Any]], cast(dict[str, Any], item).get("tools") or [])]
    names: set[str] = set()
    while tools:
        tool, *tools = tools
        tools += cast(list[dict[str, Any]], tool.get("tools") or []) if tool.get("type") == "namespace" else []
        function = tool.get("function")
        name = function.get("name") if route == "chat" and isinstance(function, dict) else tool.get("name")
        if isinstance(name, str):
            names.add(name)
    return names


def _newest_user_text(route: Route, body: dict[str, Any]) -> str:
    """The text of the last user message (every text block of it), where a client puts its compaction prompt."""
    history = cast(list[Any], body.get("input" if route == "responses" else "messages") or [])
    for message in reversed(history):
        if isinstance(message, dict) and cast(dict[str, Any], message).get("role") == "user":
            content = cast(dict[str, Any], message).get("content")
            if isinstance(content, str):
                return content
            texts = [
                str(cast(dict[str, Any], b).get("text", ""))
                for b in cast(list[Any], content or [])
                if isinstance(b, dict)
            ]
            return "\n".join(texts)
    return ""
