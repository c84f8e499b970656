"""The app as uvicorn's worker processes import it: configured from the environment (`chainsum serve` turns its
options into ``CHAINSUM_*`` variables first)."""

from __future__ import annotations

from fastapi import FastAPI

from ._app import create_app
from ._settings import ServerSettings

__all__ = ["app_from_env"]


def app_from_env() -> FastAPI:
    return create_app(ServerSettings.from_env())
