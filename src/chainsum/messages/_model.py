"""Canonical, provider-neutral message values.

These are pure values (frozen dataclasses): identity and storage are someone else's concern. Every wire format
maps onto them, and whatever a provider sends that has no field here rides along in ``extras`` so that
``dump(load(x)) == x`` holds. ``extras`` is keyed by format name (``{"anthropic": {...}}``): converting to another
format can then tell exactly what it drops, and never confuses one provider's fields for another's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = [
    "ROLES",
    "Extras",
    "File",
    "Image",
    "Message",
    "Opaque",
    "Part",
    "Reasoning",
    "ResultPart",
    "Role",
    "Text",
    "ToolCall",
    "ToolResult",
    "utf8_len",
]

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")

Extras: TypeAlias = Mapping[str, Any]
"""Opaque provider data, keyed by format name, each value a JSON-compatible object."""


def _no_extras() -> dict[str, Any]:
    return {}


def utf8_len(text: str) -> int:
    """Length of `text` in UTF-8 bytes, without encoding it when it is pure ASCII (the common case)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Reasoning:
    """Model reasoning: visible thinking text and/or an opaque, signed payload the provider wants back.

    It stands alone as a part (Anthropic ``thinking``/``redacted_thinking``, OpenAI Responses ``reasoning``) or
    rides on a `Text` or `ToolCall` (Gemini ``thoughtSignature`` on a ``functionCall``), as in the chain spec.
    """

    text: str = ""
    """The readable reasoning, possibly empty (redacted or summarized away by the provider)."""
    signature: str | None = None
    """The provider's cryptographic signature over the reasoning; sent back verbatim or not at all."""
    data: str | None = None
    """Opaque encrypted reasoning (Anthropic ``redacted_thinking.data``, OpenAI ``encrypted_content``)."""
    extras: Extras = field(default_factory=_no_extras, hash=False)
    kind: Literal["reasoning"] = "reasoning"


@dataclass(frozen=True, slots=True, kw_only=True)
class Text:
    """Plain text content."""

    text: str
    reasoning: Reasoning | None = None
    """Reasoning attached to this text (a signature some providers put on text parts)."""
    extras: Extras = field(default_factory=_no_extras, hash=False)
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True, kw_only=True)
class Image:
    """An image, by URL or inline bytes. Exactly one of `url` and `data` is normally set."""

    url: str | None = None
    data: bytes | None = None
    media_type: str | None = None
    extras: Extras = field(default_factory=_no_extras, hash=False)
    kind: Literal["image"] = "image"


@dataclass(frozen=True, slots=True, kw_only=True)
class File:
    """A document or other file: inline bytes or a URL, with its media type and optional file name."""

    data: bytes | None = None
    url: str | None = None
    media_type: str | None = None
    name: str | None = None
    extras: Extras = field(default_factory=_no_extras, hash=False)
    kind: Literal["file"] = "file"


ResultPart: TypeAlias = Text | Image | File
"""What a tool result's content may hold when it is not a plain string."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """A request by the model (or, in some simulations, the user) to run a tool."""

    id: str
    """The call id; may be empty where a provider has none (Gemini matches by name and position)."""
    name: str
    arguments: str = "{}"
    """The arguments as JSON text, exactly as the provider sent them (not re-serialized)."""
    reasoning: Reasoning | None = None
    """Reasoning bound to this call (Gemini's thought signature)."""
    extras: Extras = field(default_factory=_no_extras, hash=False)
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """The outcome of a tool call, answering `call_id`."""

    call_id: str
    name: str | None = None
    content: str | tuple[ResultPart, ...] = ""
    is_error: bool = False
    extras: Extras = field(default_factory=_no_extras, hash=False)
    kind: Literal["tool_result"] = "tool_result"

    @property
    def text(self) -> str:
        """The textual content, with non-text parts left out."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text for p in self.content if isinstance(p, Text))


@dataclass(frozen=True, slots=True, kw_only=True)
class Opaque:
    """A provider block chainsum has no model for (Anthropic server-tool blocks, OpenAI web-search items, Gemini
    executable code, ...), carried verbatim so nothing is lost. Only its own format can write it back; any other
    format reports it as dropped."""

    format: str
    """The format name it came from (``anthropic``, ``openai-responses``, ...)."""
    data: Any
    """The wire block exactly as read (JSON-compatible)."""
    extras: Extras = field(default_factory=_no_extras, hash=False)
    kind: Literal["opaque"] = "opaque"


Part: TypeAlias = Text | Reasoning | ToolCall | ToolResult | Image | File | Opaque


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """One message of a conversation.

    Roles are provider-neutral: ``tool`` messages carry `ToolResult` parts (one per OpenAI tool message, several
    per Anthropic/Gemini/Bedrock user turn), ``assistant`` messages may carry `ToolCall` parts.
    """

    role: Role
    parts: tuple[Part, ...] = ()
    id: str | None = None
    name: str | None = None
    """The participant name some providers accept (OpenAI ``name``)."""
    extras: Extras = field(default_factory=_no_extras, hash=False)

    @classmethod
    def of(cls, role: Role, *parts: Part | str, **kwargs: Any) -> Message:
        """Shorthand: strings become `Text` parts. ``Message.of("user", "hi")``."""
        return cls(role=role, parts=tuple(Text(text=p) if isinstance(p, str) else p for p in parts), **kwargs)

    @property
    def text(self) -> str:
        """The concatenated text parts (reasoning and tool parts left out)."""
        return "".join(p.text for p in self.parts if isinstance(p, Text))

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple([p for p in self.parts if isinstance(p, ToolCall)])

    @property
    def tool_results(self) -> tuple[ToolResult, ...]:
        return tuple([p for p in self.parts if isinstance(p, ToolResult)])

    def with_parts(self, parts: Sequence[Part]) -> Message:
        """A copy with other parts, everything else kept."""
        return Message(role=self.role, parts=tuple(parts), id=self.id, name=self.name, extras=self.extras)
