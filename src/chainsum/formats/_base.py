"""What every wire-format module provides, and the envelope around a loaded conversation.

A format module (``chainsum.formats.anthropic`` and so on) is pure mapping, no policy:

- ``NAME``: its name on the command line (``--format``/``--to``).
- ``sniff(data) -> int``: how sure it is that parsed JSON `data` is in this format: 0 no, 1 plausible
  (nothing contradicts it), 2 distinctive (a field only this format has). Detection picks the highest.
- ``load(data) -> Conversation``: a bare message list or a request-shaped object (``{"messages": [...], ...}``);
  whatever surrounds the messages is kept in ``Conversation.envelope`` so that the dump gives it back.
- ``dump(messages, envelope=None, dropped=None) -> Any``: the wire form. With the envelope of a conversation
  loaded from the same format it rebuilds that exact document. What the target cannot express is appended to
  `dropped` (never silently lost).

Provider data with no canonical field is stored in ``extras[NAME]`` of the message or part: unknown wire keys
verbatim under ``extras[NAME]["fields"]`` (these are reported as dropped when converting to another format),
and layout hints under other keys (how the content was shaped; not data, so never reported).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from ..errors import FormatError
from ..messages import Message

__all__ = [
    "Conversation",
    "Dropped",
    "WireFormat",
    "drop",
    "foreign_fields",
    "native",
    "require_list",
    "require_mapping",
]


def _empty() -> dict[str, Any]:
    return {}


@dataclass(frozen=True, slots=True)
class Conversation:
    """Messages plus the document they came in."""

    messages: tuple[Message, ...]
    format: str
    envelope: Mapping[str, Any] = field(default_factory=_empty)
    """Format-specific top-level data (for example the request's ``model`` and ``tools``, or that the input was
    a bare list). Only the same format's ``dump`` reads it."""


@dataclass(frozen=True, slots=True)
class Dropped:
    """Something a conversion could not express in the target format."""

    index: int
    """Index of the message it was on (in the canonical list)."""
    what: str

    def __str__(self) -> str:
        return f"message {self.index}: {self.what}"


class WireFormat(Protocol):
    NAME: str

    def sniff(self, data: Any) -> int: ...

    def load(self, data: Any) -> Conversation: ...

    def dump(
        self,
        messages: Sequence[Message],
        envelope: Mapping[str, Any] | None = None,
        dropped: list[Dropped] | None = None,
    ) -> Any: ...


def native(extras: Mapping[str, Any], name: str) -> dict[str, Any]:
    """This format's own extras (an empty dict when there are none)."""
    value = extras.get(name)
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def foreign_fields(message: Message, target: str) -> list[str]:
    """Names of other formats whose unknown wire fields sit on `message` or its parts: lost when dumping to
    `target`. Layout hints are not data and are not listed."""
    found: set[str] = set()

    def scan(extras: Mapping[str, Any]) -> None:
        for ns, value in extras.items():
            if ns != target and isinstance(value, dict) and cast(dict[str, Any], value).get("fields"):
                found.add(ns)

    scan(message.extras)
    for part in message.parts:
        scan(part.extras)
    return sorted(found)


def drop(dropped: list[Dropped] | None, index: int, what: str) -> None:
    """Report something the target format cannot express (when the caller asked to know)."""
    if dropped is not None:
        dropped.append(Dropped(index, what))


def report_foreign(messages: Sequence[Message], target: str, dropped: list[Dropped] | None) -> None:
    """Append a `Dropped` for every message that carries other formats' fields."""
    if dropped is None:
        return
    for i, m in enumerate(messages):
        for ns in foreign_fields(m, target):
            drop(dropped, i, f"{ns}-specific fields")


def require_list(value: Any, where: str, fmt: str) -> list[Any]:
    if not isinstance(value, list):
        raise FormatError(f"expected a list, got {type(value).__name__}", where=where, format=fmt)
    return cast(list[Any], value)


def require_mapping(value: Any, where: str, fmt: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FormatError(f"expected an object, got {type(value).__name__}", where=where, format=fmt)
    return cast(dict[str, Any], value)


Sniffer = Callable[[Any], int]
