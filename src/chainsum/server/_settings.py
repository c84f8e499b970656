"""`ServerSettings`: how `chainsum serve` is configured, from its options and the environment.

Every option has a variable (``CHAINSUM_UPSTREAM_URL``, ``CHAINSUM_ANTHROPIC_UPSTREAM_URL``, ``CHAINSUM_DB``,
``CHAINSUM_POSTGRES_URL``, ``CHAINSUM_API_TOKEN``, ``CHAINSUM_MAX_BODY_BYTES``, ``CHAINSUM_UPSTREAM_TIMEOUT_SECONDS``,
``CHAINSUM_SESSION_IDLE_SECONDS``), and the context manager's own
thresholds come from ``SUMMARIZATION_*`` (`chainsum.manager.ManagerConfig.from_env`), so a container is configured
without a command line. An option given on the command line wins over its variable.

Closed by default: the session API shows every archived conversation, so without `api_token` the server makes one
(``chainsum serve`` prints the page's URL with it) and `no_auth` is the explicit, loopback-only way out. What the
token, a client's own key, the Host and Origin checks allow is `chainsum.server._access`'s to say.
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
    "no_auth": "CHAINSUM_NO_AUTH",
    "allowed_hosts": "CHAINSUM_ALLOWED_HOSTS",
    "public_metrics": "CHAINSUM_PUBLIC_METRICS",
    "upstream_timeout_s": "CHAINSUM_UPSTREAM_TIMEOUT_SECONDS",
    "session_idle_s": "CHAINSUM_SESSION_IDLE_SECONDS",
    "shutdown_timeout_s": "CHAINSUM_SHUTDOWN_TIMEOUT_SECONDS",
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
    """The admin token: ``Authorization: Bearer <token>`` opens every session in ``/api/*`` and the page (a client's
    own API key opens its own sessions). Unset, ``chainsum serve`` generates one and prints the page's URL with it."""
    no_auth: bool = False
    """No token at all: every local caller sees every session (loopback hosts only; a warning at start)."""
    allowed_hosts: tuple[str, ...] = ()
    """``Host`` names served besides the loopback names and the bound address (``name`` for any port,
    ``name:port``, ``*`` for any); comma-separated in the variable. Others get 421."""
    public_metrics: bool = False
    """``/metrics`` without the admin token (for a scraper that cannot send one)."""
    workers: int = 1
    """Worker processes; above 1 they need a shared store (a SQLite file or PostgreSQL)."""
    max_body_bytes: int = 32 * 1024 * 1024
    """Largest request body read (413 above it): a client cannot make the proxy hold an unbounded body."""
    upstream_timeout_s: float = 600.0
    """Longest wait for the upstream, in seconds: to connect (never more than `connect_timeout_s`), and between two
    chunks of its answer (a long generation streams slowly). Past it the client gets a 504 in its provider's error
    shape."""
    connect_timeout_s: float = 10.0
    """Longest wait to connect to the upstream (capped by `upstream_timeout_s`)."""
    session_idle_s: float = 600.0
    """A session that has had no request for this many seconds leaves this process's memory; its state is in the
    store, and its next request takes it up from there (no compaction is redone, nothing archived is lost)."""
    shutdown_timeout_s: float = 30.0
    """At shutdown (SIGTERM), how long the requests in flight get to finish, and then the preparations still
    running (each releases its session's lock as it ends), before the process exits anyway."""
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

        def seconds(name: str) -> float | None:
            value = text(name)
            if value is None:
                return None
            try:
                parsed = float(value)
            except ValueError:
                raise SettingsError(f"{name}={value!r}: expected a number of seconds") from None
            if not 0 < parsed < float("inf"):
                raise SettingsError(f"{name}={value!r}: expected a positive number of seconds")
            return parsed

        def flag(name: str) -> bool | None:
            value = text(name)
            if value is None:
                return None
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
            raise SettingsError(f"{name}={value!r}: expected 1 or 0")

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
            no_auth=flag(VARIABLES["no_auth"]) or False,
            allowed_hosts=tuple(h.strip() for h in (text(VARIABLES["allowed_hosts"]) or "").split(",") if h.strip()),
            public_metrics=flag(VARIABLES["public_metrics"]) or False,
            upstream_timeout_s=seconds(VARIABLES["upstream_timeout_s"]) or 600.0,
            session_idle_s=seconds(VARIABLES["session_idle_s"]) or 600.0,
            shutdown_timeout_s=seconds(VARIABLES["shutdown_timeout_s"]) or 30.0,
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
        for name, value in (
            ("--upstream-timeout", self.upstream_timeout_s),
            ("--session-idle-timeout", self.session_idle_s),
            ("CHAINSUM_SHUTDOWN_TIMEOUT_SECONDS", self.shutdown_timeout_s),
        ):
            if not 0 < value < float("inf"):
                raise SettingsError(f"{name} {value}: expected a positive number of seconds")
        if self.workers < 1:
            raise SettingsError(f"--workers {self.workers}: expected 1 or more")
        if self.workers > 1 and self.postgres is None and self.db is None:
            raise SettingsError("--workers above 1 needs a shared store: --db FILE or --postgres URL")
        if self.no_auth and not is_loopback(self.host):
            raise SettingsError(
                f"--no-auth with --host {self.host}: refused beyond loopback (anyone who reaches the port could read "
                "every session); leave the token on, or bind 127.0.0.1"
            )
        if self.no_auth and self.api_token:
            raise SettingsError("--no-auth and CHAINSUM_API_TOKEN: give one (a token, or none at all)")
        for entry in self.allowed_hosts:
            if not entry or any(c in entry for c in "/ ,@?#") or entry.startswith(":"):
                raise SettingsError(f"--allowed-host {entry!r}: expected a host name, NAME:PORT or *")


def is_loopback(host: str) -> bool:
    """``localhost``, ``127.0.0.0/8`` and ``::1``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
