"""A real `chainsum serve` app on a loopback port (uvicorn in a thread), and helpers to drive it."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import httpx
import uvicorn
from fastapi import FastAPI
from starlette.types import ASGIApp

from chainsum.manager import AnySummarizer, ManagerConfig
from chainsum.server import ServerSettings, create_app
from chainsum.store import SqlStore
from chainsum.testing import FakeLLMServer


class SupportsClose(Protocol):
    def close(self) -> None: ...


T = TypeVar("T", bound=SupportsClose)


@dataclass
class Running:
    app: FastAPI
    url: str
    """``http://127.0.0.1:PORT``."""
    closers: list[SupportsClose] = field(default_factory=list[SupportsClose])

    def keep(self, client: T) -> T:
        """`client` (an SDK client), closed when the server stops."""
        self.closers.append(client)
        return client

    @property
    def openai_url(self) -> str:
        return self.url + "/v1"

    @property
    def token(self) -> str | None:
        """The admin token of the running app (`ADMIN_TOKEN` unless the test gave another; None with no_auth)."""
        token: str | None = self.app.state.chainsum.settings.api_token
        return token

    def auth(self, token: str | None = None) -> dict[str, str]:
        """The ``Authorization`` header for `token` (the admin token when None; no header for "")."""
        token = self.token if token is None else token
        return {"Authorization": f"Bearer {token}"} if token else {}

    def api(self, token: str | None = None) -> httpx.Client:
        """A client of the session API (use it in a ``with`` block): the admin's when `token` is None, none for ""."""
        return httpx.Client(base_url=self.url, headers=self.auth(token), timeout=30)

    def get(self, path: str, token: str | None = None) -> Any:
        """``GET path`` of the session API, its JSON (asserting a 200)."""
        with self.api(token) as client:
            response = client.get(path)
        assert response.status_code == 200, response.text
        return response.json()


def chat(n: int) -> list[dict[str, Any]]:
    """An order-desk chat of `n` exchanges (about 90 tokens each) and a new question: OpenAI messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are the order desk."}]
    for i in range(n):
        out.append({"role": "user", "content": f"Where is order ORD-{1000 + i}? " + "please check " * 12})
        out.append({"role": "assistant", "content": f"ORD-{1000 + i} is in warehouse W{i}. " + "checked " * 12})
    out.append({"role": "user", "content": "Thanks, and the newest one?"})
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve_app(app: FastAPI, *, asgi: ASGIApp | None = None) -> Iterator[Running]:
    """Run `app` under uvicorn on a free loopback port until the block ends (`asgi`: what uvicorn serves instead,
    an ASGI middleware around `app`, as an instrumentation would wrap it)."""
    port = free_port()
    config = uvicorn.Config(asgi or app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    running = Running(app, f"http://127.0.0.1:{port}")
    try:
        yield running
    finally:
        for client in running.closers:
            client.close()
        server.should_exit = True
        thread.join(20)


ADMIN_TOKEN = "test-admin-token"
"""The admin token of the test apps (the server is closed by default: tests use a token they know)."""


def settings_for(fake: FakeLLMServer | None, **overrides: Any) -> ServerSettings:
    """Settings pointing both upstreams at the fake server (or at a closed port), with `ADMIN_TOKEN`."""
    base = fake.base_url if fake is not None else f"http://127.0.0.1:{free_port()}"
    values: dict[str, Any] = {
        "upstream": base + "/v1",
        "anthropic_upstream": base,
        "config": ManagerConfig(),
        "api_token": ADMIN_TOKEN,
    }
    values.update(overrides)
    return ServerSettings(**values)


@contextlib.contextmanager
def proxy(
    fake: FakeLLMServer | None,
    store: SqlStore,
    *,
    summarizers: Sequence[AnySummarizer] | None = None,
    **overrides: Any,
) -> Iterator[Running]:
    app = create_app(settings_for(fake, **overrides), store=store, summarizers=summarizers, event_poll_s=0.05)
    with serve_app(app) as running:
        yield running
