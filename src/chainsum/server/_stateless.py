"""``POST /api/compact``: what ``chainsum compact`` does, JSON in and out, nothing stored.

The body: ``{"conversation": <a document in any format chainsum reads>, "budget": tokens, "format": optional,
"provider": optional, "strategy": optional, "hard_limit": optional}``. The answer: the compacted document (in the
input's format, or the provider's) and the same report as the CLI's ``--report``, whose ``fits``, ``valid`` and
``errors`` say whether the result fell short.

Thin: this module checks the body, naming the field at fault in a 400, and `chainsum.manager.compact_document`
compacts with the `CompactionSettings` of the service's configuration, the manager's own (the same strategy behind
the same tail guard).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import manager
from ..executor import check_budget, check_hard_limit
from ..formats import load
from ..manager import CompactionSettings, ManagerConfig
from ..rules import PROVIDERS
from ..strategies import STRATEGIES
from ._errors import ProxyError

__all__ = ["compact_document"]


def _text(body: Mapping[str, Any], name: str, choices: tuple[str, ...] | None = None) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or (choices is not None and value not in choices):
        allowed = f"one of {', '.join(choices)}" if choices else "a string"
        raise ProxyError(400, f"{name}: expected {allowed}, got {value!r}", name)
    return value


def _tokens(body: Mapping[str, Any], name: str) -> int | None:
    try:
        return check_budget(body.get(name), name)
    except (TypeError, ValueError) as exc:
        raise ProxyError(400, str(exc), name) from None


async def compact_document(body: Mapping[str, Any], config: ManagerConfig) -> dict[str, Any]:
    """The answer to the body of ``POST /api/compact`` (`ProxyError` 400 naming the field for bad input; a
    conversation that cannot be read raises `chainsum.errors.FormatError`, which the route names as
    ``conversation``)."""
    if "conversation" not in body:
        raise ProxyError(400, "conversation: required (the history, in any format chainsum reads)", "conversation")
    budget = _tokens(body, "budget")
    hard_limit = _tokens(body, "hard_limit")
    try:
        check_hard_limit(hard_limit, budget, "hard_limit", "budget")
    except ValueError as exc:
        raise ProxyError(400, str(exc), "hard_limit") from None
    provider = _text(body, "provider", tuple(PROVIDERS))
    fmt = _text(body, "format")
    strategy = _text(body, "strategy", tuple(STRATEGIES))
    conv = load(body["conversation"], format=fmt)
    try:
        settings = CompactionSettings.from_config(config)
    except ValueError as exc:
        raise ProxyError(400, f"the configured summarizer: {exc}") from None
    done = await manager.compact_document(
        conv, budget=budget, hard_limit=hard_limit, provider=provider, strategy=strategy, settings=settings
    )
    return {
        "conversation": done.document,
        "format": done.format,
        "report": done.report(),
        "dropped": [str(d) for d in done.dropped],
    }
