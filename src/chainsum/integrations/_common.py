"""What every integration shares: importing its framework with an install hint, and making its `ContextManager`
from the keyword arguments the integration was given (so each takes exactly `ContextManager`'s)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from ..errors import MissingDependencyError
from ..manager import ContextManager, ManagerConfig

__all__ = ["check_manager_arguments", "make_manager", "require"]


def require(module: str, *, package: str, extra: str) -> ModuleType:
    """Import `module` of an optional framework, or raise `MissingDependencyError` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(package, extra) from exc


def make_manager(
    manager: ContextManager | None, kwargs: dict[str, Any], *, format: str | None = None
) -> ContextManager:
    """The integration's manager: the one given, or one made from `ContextManager`'s keyword arguments (with the
    framework's wire `format` as default when it hands the manager wire dicts rather than `Message` objects, and the
    configuration from the environment when no `config` is given). Giving both is an error (the keyword arguments
    would be ignored)."""
    if manager is not None:
        if kwargs:
            raise TypeError(f"pass either manager= or ContextManager's arguments, not both (got {sorted(kwargs)})")
        return manager
    if format is not None:
        kwargs.setdefault("format", format)
    if kwargs.get("config") is None:
        kwargs["config"] = ManagerConfig.from_env()  # SUMMARIZATION_* (and .env), as the CLI and the server read
    return ContextManager(**kwargs)


def check_manager_arguments(manager: object, kwargs: Mapping[str, Any], *, framework: str, example: str) -> None:
    """One-line errors, at once, for the objects a `framework` user may pass where chainsum takes something else:
    a `manager=` that is no `ContextManager`, a model object as ``model=`` (a model name for the window, such as
    `example`; the framework's model that writes the summaries goes in ``summarizer=``)."""
    if manager is not None and not isinstance(manager, ContextManager):
        raise TypeError(f"manager= takes a chainsum ContextManager; got {type(manager).__name__}")
    model = kwargs.get("model")
    if model is not None and not isinstance(model, str):
        raise TypeError(
            f"model= is a model name for the context window (such as {example!r}); got {type(model).__name__} (the "
            f"{framework} model that writes the summaries goes in summarizer=)"
        )
