"""A scripted fake LLM provider on loopback, shipped so users can test their summarizer wiring without a real API.

`FakeLLMServer` is a real HTTP server on ``127.0.0.1`` (a free port, a background thread) that speaks just enough of
two wire protocols for a summarizer: OpenAI Chat Completions (``POST /v1/chat/completions``, also what vLLM, Ollama,
OpenRouter and LiteLLM's OpenAI-compatible route speak) and Anthropic Messages (``POST /v1/messages``). The real
SDKs talk to it over real sockets, so their timeouts, status handling and JSON parsing are exercised as in
production; a mock object would test only our guesses about them.

Each request takes the next scripted reply from a queue (`FakeLLMServer.script`); when the queue is empty the
server answers with `FakeLLMServer.default`. Every request received is recorded (`FakeLLMServer.requests`) so a
test can check the model, messages and limits the client actually sent::

    with FakeLLMServer() as server:
        server.script(FakeRateLimit(retry_after="0"), FakeText("summary"))
        summarizer = OpenAISummarizer("gpt-test", base_url=server.openai_base_url, api_key="test", retries=1)
        assert asyncio.run(summarizer("transcript")) == "summary"
        assert server.requests[1].json["model"] == "gpt-test"
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Literal, TypeAlias, assert_never, cast

from ._fake_stream import anthropic_events, models_list, openai_chunks, responses_answer, responses_events

__all__ = [
    "FakeEmpty",
    "FakeLLMServer",
    "FakeMalformed",
    "FakeRateLimit",
    "FakeRefusal",
    "FakeReply",
    "FakeStall",
    "FakeStatus",
    "FakeText",
    "FakeWrongShape",
    "ReceivedRequest",
]

logger = logging.getLogger(__name__)

Dialect: TypeAlias = Literal["openai", "anthropic", "responses"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeText:
    """A successful completion whose text is `text`."""

    kind: Literal["text"] = "text"
    text: str = "A fake summary."
    """The assistant text; also the summary a summarizer should return (after stripping)."""
    delay_s: float = 0.0
    """When the request asks to stream: the pause before each streamed chunk (a slow model)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeRateLimit:
    """HTTP 429 in the provider's error format."""

    kind: Literal["rate_limit"] = "rate_limit"
    retry_after: str | None = None
    """The ``retry-after`` header as sent (delay seconds or an HTTP date); None sends no header."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeStall:
    """Accept the request and send nothing for `seconds`, to trip a client timeout. Closing the server ends the
    stall early, so a test never waits the full time on shutdown."""

    kind: Literal["stall"] = "stall"
    seconds: float = 5.0


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeStatus:
    """An error status (500 by default) with a provider-style JSON error body."""

    kind: Literal["status"] = "status"
    status: int = 500
    message: str = "internal error"


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeEmpty:
    """A well-formed success with no text: whitespace content, or (with `no_content`) no choices / no blocks."""

    kind: Literal["empty"] = "empty"
    no_content: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeMalformed:
    """HTTP 200, ``application/json``, and a body that is not JSON."""

    kind: Literal["malformed"] = "malformed"


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeWrongShape:
    """HTTP 200 with valid JSON of the wrong shape (``choices`` / ``content`` is a string, not a list)."""

    kind: Literal["wrong_shape"] = "wrong_shape"


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeRefusal:
    """The model declined: OpenAI's ``message.refusal`` with ``finish_reason: content_filter``, Anthropic's
    ``stop_reason: refusal``."""

    kind: Literal["refusal"] = "refusal"


FakeReply: TypeAlias = (
    FakeText | FakeRateLimit | FakeStall | FakeStatus | FakeEmpty | FakeMalformed | FakeWrongShape | FakeRefusal
)
"""One scripted answer to one request."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReceivedRequest:
    """A request as the fake server received it."""

    path: str
    """The URL path, e.g. ``/v1/chat/completions``."""
    headers: dict[str, str]
    """Header names lower-cased."""
    json: object
    """The decoded JSON body (None when it was not JSON)."""
    query: str = ""
    """The query string, without its ``?`` (e.g. Azure's ``api-version=...``)."""
    raw: bytes = b""
    """The body as received, byte for byte (what a proxy promises to forward untouched)."""


@dataclass(frozen=True, slots=True)
class _Response:
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()


_PATHS: dict[str, Dialect] = {
    "/v1/chat/completions": "openai",
    "/chat/completions": "openai",
    "/v1/messages": "anthropic",
    "/v1/responses": "responses",
    "/responses": "responses",
}


def _json_response(status: int, payload: object, headers: tuple[tuple[str, str], ...] = ()) -> _Response:
    return _Response(status, json.dumps(payload).encode(), headers)


def _error(dialect: Dialect, status: int, kind: str, message: str) -> object:
    if dialect != "anthropic":
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return {"type": "error", "error": {"type": kind, "message": message}}


def _openai_completion(model: str, content: str | None, *, refusal: str | None = None, finish: str = "stop") -> object:
    message: dict[str, object] = {"role": "assistant", "content": content, "refusal": refusal}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _anthropic_message(model: str, blocks: list[object], stop_reason: str = "end_turn") -> object:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _success(dialect: Dialect, model: str, text: str) -> _Response:
    if dialect == "openai":
        return _json_response(200, _openai_completion(model, text))
    if dialect == "responses":
        return _json_response(200, responses_answer(model, text))
    return _json_response(200, _anthropic_message(model, [{"type": "text", "text": text}]))


def _render(reply: FakeReply, dialect: Dialect, model: str) -> _Response:
    """The HTTP response for one scripted reply (stalls are handled before this is called)."""
    match reply:
        case FakeText():
            return _success(dialect, model, reply.text)
        case FakeRateLimit():
            headers = (("retry-after", reply.retry_after),) if reply.retry_after is not None else ()
            return _json_response(429, _error(dialect, 429, "rate_limit_error", "rate limited"), headers)
        case FakeStatus():
            return _json_response(reply.status, _error(dialect, reply.status, "api_error", reply.message))
        case FakeEmpty():
            if dialect != "anthropic":
                payload = cast(dict[str, object], _openai_completion(model, "  \n"))
                if reply.no_content:
                    payload["choices"] = []
                return _json_response(200, payload)
            blocks: list[object] = [] if reply.no_content else [{"type": "text", "text": " \n "}]
            return _json_response(200, _anthropic_message(model, blocks))
        case FakeMalformed():
            return _Response(
                200, b'{"choices": [{"message": {"content": "trunc', (("content-type", "application/json"),)
            )
        case FakeWrongShape():
            key = "content" if dialect == "anthropic" else "choices"
            return _json_response(200, {"id": "x", "model": model, key: "not a list"})
        case FakeRefusal():
            if dialect != "anthropic":
                completion = _openai_completion(model, None, refusal="I can't help with that.", finish="content_filter")
                return _json_response(200, completion)
            return _json_response(200, _anthropic_message(model, [], stop_reason="refusal"))
        case FakeStall():  # pragma: no cover - the handler stalls before rendering
            return _json_response(504, _error(dialect, 504, "timeout", "stalled"))
        case _:
            assert_never(reply)


class _Server(ThreadingHTTPServer):
    request_queue_size = 256
    """A hundred clients connecting at once must queue, not be reset (the default backlog is 5)."""


class FakeLLMServer:
    """A loopback HTTP server answering OpenAI Chat Completions and Anthropic Messages requests from a script.

    Use it as a context manager (it starts on enter and stops on exit) or call `start` / `close`. Thread-safe:
    the SDKs may send concurrent requests, each served on its own thread.
    """

    def __init__(self, *, default: FakeReply | None = None) -> None:
        self.default: FakeReply = default if default is not None else FakeText()
        """The reply used when the script is exhausted."""
        self.requests: list[ReceivedRequest] = []
        """Every request received, in arrival order."""
        self.disconnects = 0
        """Streams the client closed before their end (a write to its socket failed)."""
        self.completed_streams = 0
        """Streams sent to their end."""
        self._script: deque[FakeReply] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -------------------------------------------------------------------------------------------------

    def start(self) -> FakeLLMServer:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        self._closing.clear()
        httpd = _Server(("127.0.0.1", 0), _make_handler(self))
        httpd.daemon_threads = True
        httpd.block_on_close = False  # a stalled handler must not hold up close()
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.02},  # how long close() waits for the loop to notice; keep tests quick
            name="chainsum-fake-llm",
            daemon=True,
        )
        self._thread.start()
        logger.debug("port=<%d> | fake llm server started", self.port)
        return self

    def close(self) -> None:
        """Stop serving, end any stall, and release the port."""
        self._closing.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # addresses -------------------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the fake server is not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``: the root, what the Anthropic SDK takes as ``base_url``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what the OpenAI SDK (and LiteLLM's ``api_base``) take."""
        return self.base_url + "/v1"

    # script ----------------------------------------------------------------------------------------------------

    def script(self, *replies: FakeReply) -> None:
        """Queue replies, answered in order, one per request."""
        with self._lock:
            self._script.extend(replies)

    def _next(self, request: ReceivedRequest) -> FakeReply:
        with self._lock:
            self.requests.append(request)
            return self._script.popleft() if self._script else self.default

    def _stall(self, seconds: float) -> None:
        self._closing.wait(seconds)


def _make_handler(server: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        """Serves one request from the script; never raises, so no thread dies with a traceback. HTTP/1.1, so a
        client keeps its connection open between requests, as real providers allow."""

        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True
        """Headers and body go out in two writes: with Nagle's algorithm the second waits for the client's delayed
        ACK of the first, 40 ms on Linux, on every kept-alive request."""

        def do_POST(self) -> None:
            try:
                self._serve()
            except OSError:  # the client gave up (its timeout) and closed the socket
                logger.debug("path=<%s> | client went away", self.path)

        def do_GET(self) -> None:
            path, _, query = self.path.partition("?")
            headers = {name.lower(): value for name, value in self.headers.items()}
            with server._lock:  # pyright: ignore[reportPrivateUsage]
                server.requests.append(ReceivedRequest(path=path, headers=headers, json=None, query=query))
            if path in ("/v1/models", "/models"):
                self._send(_json_response(200, models_list()))
            else:
                self._send(_json_response(404, {"error": {"message": f"no route {path}"}}))

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                payload = cast(object, json.loads(raw)) if raw else None
            except ValueError:
                payload = None
            headers = {name.lower(): value for name, value in self.headers.items()}
            path, _, query = self.path.partition("?")
            received = ReceivedRequest(path=path, headers=headers, json=payload, query=query, raw=raw)
            reply = server._next(received)  # pyright: ignore[reportPrivateUsage]
            dialect = _PATHS.get(path)
            if dialect is None:
                self._send(_json_response(404, {"error": {"message": f"no route {path}"}}))
                return
            if isinstance(reply, FakeStall):
                server._stall(reply.seconds)  # pyright: ignore[reportPrivateUsage]
                return  # send nothing; the connection just closes
            model = ""
            stream = False
            if isinstance(payload, dict):
                model = str(cast(dict[str, object], payload).get("model", ""))
                stream = cast(dict[str, object], payload).get("stream") is True
            if stream and isinstance(reply, FakeText):
                self._stream(reply, dialect, model)
                return
            self._send(_render(reply, dialect, model))

        def _stream(self, reply: FakeText, dialect: Dialect, model: str) -> None:
            render = {"openai": openai_chunks, "anthropic": anthropic_events, "responses": responses_events}[dialect]
            frames = render(model, reply.text)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                for frame in frames:
                    if reply.delay_s:
                        server._stall(reply.delay_s)  # pyright: ignore[reportPrivateUsage]
                    self.wfile.write(frame)
                    self.wfile.flush()
            except OSError:
                with server._lock:  # pyright: ignore[reportPrivateUsage]
                    server.disconnects += 1
                raise
            with server._lock:  # pyright: ignore[reportPrivateUsage]
                server.completed_streams += 1

        def _send(self, response: _Response) -> None:
            self.send_response(response.status)
            names = {name.lower() for name, _ in response.headers}
            if "content-type" not in names:
                self.send_header("content-type", "application/json")
            for name, value in response.headers:
                self.send_header(name, value)
            self.send_header("content-length", str(len(response.body)))
            self.end_headers()
            self.wfile.write(response.body)

        def log_message(self, format: str, *args: object) -> None:
            logger.debug("request=<%s> | fake llm server", format % args)

    return Handler
