"""``chainsum serve``: an OpenAI- and Anthropic-compatible proxy that keeps each conversation inside its window,
plus the session API, the event stream and the web page (``pip install "chainsum[server]"``).

Point a client at it instead of the model server and change nothing else: it compacts the history it forwards,
relays the answer unchanged (streams as they arrive), announces each compaction, and archives every removed message
where the session API (and the page at ``/``) can show it. `create_app` makes the FastAPI app; `ServerSettings`
configures it (options and ``CHAINSUM_*`` / ``SUMMARIZATION_*`` variables).
"""

from __future__ import annotations

import importlib.util

from ..errors import MissingDependencyError as _MissingDependencyError

for _package in ("fastapi", "uvicorn", "aiohttp", "prometheus_client", "orjson"):
    if importlib.util.find_spec(_package) is None:  # pragma: no cover - the server extra is in the dev group
        raise _MissingDependencyError(_package, "server")

from ._app import create_app, open_store  # noqa: E402 - after the dependency check, for its error message
from ._mcp import archive_server  # noqa: E402
from ._settings import (  # noqa: E402
    DEFAULT_ANTHROPIC_UPSTREAM,
    DEFAULT_OPENAI_UPSTREAM,
    VARIABLES,
    ServerSettings,
    SettingsError,
)

__all__ = [
    "DEFAULT_ANTHROPIC_UPSTREAM",
    "DEFAULT_OPENAI_UPSTREAM",
    "VARIABLES",
    "ServerSettings",
    "SettingsError",
    "archive_server",
    "create_app",
    "open_store",
]
