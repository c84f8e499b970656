"""A scripted fake LLM provider on loopback, shipped so users can test their summarizer wiring without a real API.

`FakeLLMServer` is a real HTTP server on ``127.0.0.1`` (a free port, a background thread) that speaks just enough of
the providers' wire protocols for a summarizer: OpenAI Chat Completions (``POST /v1/chat/completions``, also what
vLLM, Ollama, OpenRouter and LiteLLM's OpenAI-compatible route speak), the Responses API (``POST /v1/responses``),
Anthropic Messages (``POST /v1/messages``), Bedrock Converse (``POST /model/{modelId}/converse``: point boto3 at
`FakeLLMServer.base_url` with ``endpoint_url`` or ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME``) and Gemini
``generateContent`` (``POST /v1beta/models/{model}:generateContent``: the ``google-genai`` SDK's
``HttpOptions(base_url=...)``). Each dialect's answers are rendered in `_fake_dialects` and `_fake_cloud`. The real
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
from typing import cast

from ._fake_dialects import STREAMING_DIALECTS, Dialect, render, route
from ._fake_replies import (
    FakeEmpty,
    FakeMalformed,
    FakeRateLimit,
    FakeRefusal,
    FakeReply,
    FakeStall,
    FakeStatus,
    FakeText,
    FakeWrongShape,
    HttpReply,
    json_reply,
)
from ._fake_stream import anthropic_events, models_list, openai_chunks, responses_events

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


@dataclass(frozen=True, slots=True, kw_only=True)
class ReceivedRequest:
    """A request as the fake server received it."""

    path: str
    """The URL path, e.g. ``/v1/chat/completions`` (as sent: Bedrock's model id stays percent-encoded)."""
    headers: dict[str, str]
    """Header names lower-cased."""
    json: object
    """The decoded JSON body (None when it was not JSON)."""
    query: str = ""
    """The query string, without its ``?`` (e.g. Azure's ``api-version=...``)."""
    raw: bytes = b""
    """The body as received, byte for byte (what a proxy promises to forward untouched)."""
    model: str = ""
    """The model the request asked for: the body's ``model``, or the one in the path (Bedrock, Gemini)."""


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
        """``http://127.0.0.1:PORT``: the root, what the Anthropic SDK takes as ``base_url``, boto3 as
        ``endpoint_url`` (or ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME``), ``google-genai`` as
        ``HttpOptions(base_url=...)``."""
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


def _as_object(payload: object) -> dict[str, object]:
    return cast(dict[str, object], payload) if isinstance(payload, dict) else {}


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
                self._send(json_reply(200, models_list()))
            else:
                self._send(json_reply(404, {"error": {"message": f"no route {path}"}}))

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                payload: object = cast(object, json.loads(raw)) if raw else None
            except ValueError:
                payload = None
            headers = {name.lower(): value for name, value in self.headers.items()}
            path, _, query = self.path.partition("?")
            found = route(path)
            body = _as_object(payload)
            model = found.model if found is not None and found.model is not None else str(body.get("model", ""))
            received = ReceivedRequest(path=path, headers=headers, json=payload, query=query, raw=raw, model=model)
            reply = server._next(received)  # pyright: ignore[reportPrivateUsage]
            if found is None:
                self._send(json_reply(404, {"error": {"message": f"no route {path}"}}))
                return
            if isinstance(reply, FakeStall):
                server._stall(reply.seconds)  # pyright: ignore[reportPrivateUsage]
                return  # send nothing; the connection just closes
            if body.get("stream") is True and isinstance(reply, FakeText) and found.dialect in STREAMING_DIALECTS:
                self._stream(reply, found.dialect, model)
                return
            self._send(render(reply, found.dialect, model))

        def _stream(self, reply: FakeText, dialect: Dialect, model: str) -> None:
            frames = {"openai": openai_chunks, "anthropic": anthropic_events, "responses": responses_events}[dialect](
                model, reply.text
            )
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

        def _send(self, response: HttpReply) -> None:
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
