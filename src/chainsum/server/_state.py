"""`AppState`: the long-lived resources of one server app, opened in its lifespan and reached by the routers
through the request (never module globals, so two apps in one process, as in tests, never share anything)."""

from __future__ import annotations

from dataclasses import dataclass, field

from fastapi import Request

from ..store import SqlStore
from ..tokens import TokenCounter
from ._body import Bodies
from ._hub import EventHub
from ._metrics import Metrics
from ._sessions import Sessions
from ._settings import ServerSettings
from ._upstream import Upstream

__all__ = ["AppState", "state_of"]


@dataclass(eq=False, slots=True, kw_only=True)
class AppState:
    settings: ServerSettings
    store: SqlStore
    sessions: Sessions
    hub: EventHub
    metrics: Metrics
    upstream: Upstream
    counter: TokenCounter
    bodies: Bodies = field(default_factory=Bodies)
    """The previous request body of each recent client, which the next one is parsed against (`_body`)."""


def state_of(request: Request) -> AppState:
    """The app's state (set by the lifespan before the first request)."""
    state: AppState = request.app.state.chainsum
    return state
