"""`ServerSettings`: how `chainsum serve` is configured, from its options and the environment.

Every option has a variable (``CHAINSUM_UPSTREAM_URL``, ``CHAINSUM_ANTHROPIC_UPSTREAM_URL``, ``CHAINSUM_DB``,
``CHAINSUM_POSTGRES_URL``, ``CHAINSUM_API_TOKEN``, ``CHAINSUM_MAX_BODY_BYTES``), and the context manager's own
thresholds come from ``SUMMARIZATION_*`` (`chainsum.manager.ManagerConfig.from_env`), so a container is configured
without a command line. An option given on the command line wins over its variable.

Why refuse a public address without a token: the session API shows every archived conversation; bound anywhere but
loopback without `api_token`, anyone who can reach the port could read them. ``--insecure`` is the explicit way
to accept that (behind a proxy that authenticates, say).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ..errors import ChainsumError
from ..manager import ManagerConfig

__all__ = ["DEFAULT_ANTHROPIC_UPSTREAM", "DEFAULT_OPENAI_UPSTREAM", "VARIABLES", "ServerSettings", "SettingsError"]

DEFAULT_OPENAI_UPSTREAM = "https://api.openai.com/v1"
"""An OpenAI-style base URL, as ``OPENAI_BASE_URL`` is written (it ends in ``/v1``)."""
DEFAULT_ANTHROPIC_UPSTREAM = "https://api.anthropic.com"
"""An Anthropic base URL, as ``ANTHROPIC_BASE_URL`` is written (the SDK adds ``/v1/messages``)."""
VARIABLES: Mapping[str, str] = {
    "upstream": "CHAINSUM_UPSTREAM_URL",
    "anthropic_upstream": "CHAINSUM_ANTHROPIC_UPSTREAM_URL",
    "db": "CHAINSUM_DB",
    "postgres": "CHAINSUM_POSTGRES_URL",
    "api_token": "CHAINSUM_API_TOKEN",
    "max_body_bytes": "CHAINSUM_MAX_BODY_BYTES",
}
"""The environment variable of each setting read from ``CHAINSUM_*`` (``chainsum serve`` sets them for its
workers from its options)."""


class SettingsError(ChainsumError, ValueError):
    """A server option or variable that cannot be used; the message names it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSettings:
    """Everything `chainsum.server.create_app` needs to know."""

    host: str = "127.0.0.1"
    port: int = 8765
    upstream: str = DEFAULT_OPENAI_UPSTREAM
    """Where OpenAI-style requests go (``/chat/completions``, ``/responses``, ``/models`` below it)."""
    anthropic_upstream: str = DEFAULT_ANTHROPIC_UPSTREAM
    """Where ``/v1/messages`` goes."""
    db: str | None = None
    """SQLite file of the store; None with no `postgres` means ``chainsum.db`` in the working directory."""
    postgres: str | None = None
    """PostgreSQL URL: the store for several workers or hosts."""
    api_token: str | None = None
    """When set, ``/api/*`` and the page need ``Authorization: Bearer <token>``."""
    insecure: bool = False
    """Allow a non-loopback address without `api_token`."""
    workers: int = 1
    """Worker processes; above 1 they need a shared store (a SQLite file or PostgreSQL)."""
    max_body_bytes: int = 32 * 1024 * 1024
    """Largest request body read (413 above it): a client cannot make the proxy hold an unbounded body."""
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 600.0
    """Longest silence from the upstream in one response (a long generation streams slowly)."""
    context_window: int | None = None
    """Used for every request whose ``X-Chainsum-Context-Window`` header is absent, before the model table."""
    config: ManagerConfig = field(default_factory=ManagerConfig)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: object) -> ServerSettings:
        """Settings from ``CHAINSUM_*`` and ``SUMMARIZATION_*`` variables, then `overrides` (options given)."""
        env = os.environ if environ is None else environ

        def text(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        def number(name: str) -> int | None:
            value = text(name)
            if value is None:
                return None
            try:
                parsed = int(value)
            except ValueError:
                raise SettingsError(f"{name}={value!r}: expected a whole number") from None
            if parsed <= 0:
                raise SettingsError(f"{name}={value!r}: expected a positive number")
            return parsed

        config = ManagerConfig.from_env(env)
        settings = cls(
            upstream=text(VARIABLES["upstream"]) or DEFAULT_OPENAI_UPSTREAM,
            anthropic_upstream=text(VARIABLES["anthropic_upstream"]) or DEFAULT_ANTHROPIC_UPSTREAM,
            db=text(VARIABLES["db"]),
            postgres=text(VARIABLES["postgres"]),
            api_token=text(VARIABLES["api_token"]),
            max_body_bytes=number(VARIABLES["max_body_bytes"]) or 32 * 1024 * 1024,
            context_window=config.context_window,
            config=config,
        )
        given = {k: v for k, v in overrides.items() if v is not None}
        settings = replace(settings, **given)  # pyright: ignore[reportArgumentType]
        settings.check()
        return settings

    def check(self) -> None:
        """Raise `SettingsError` for settings that cannot serve safely."""
        for name, url in (("--upstream", self.upstream), ("--anthropic-upstream", self.anthropic_upstream)):
            if not url.startswith(("http://", "https://")):
                raise SettingsError(f"{name} {url!r}: expected an http:// or https:// URL")
        if self.db is not None and self.postgres is not None:
            raise SettingsError("--db and --postgres are exclusive: give one store")
        if self.workers < 1:
            raise SettingsError(f"--workers {self.workers}: expected 1 or more")
        if self.workers > 1 and self.postgres is None and self.db is None:
            raise SettingsError("--workers above 1 needs a shared store: --db FILE or --postgres URL")
        if not self.api_token and not self.insecure and not is_loopback(self.host):
            raise SettingsError(
                f"--host {self.host}: refusing to serve the session API beyond loopback without a token; "
                "set CHAINSUM_API_TOKEN, or pass --insecure to accept that anyone who reaches the port can read it"
            )


def is_loopback(host: str) -> bool:
    """``localhost``, ``127.0.0.0/8`` and ``::1``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
