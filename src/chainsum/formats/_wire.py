"""The wire shapes the OpenAI Chat Completions and Anthropic Messages modules write, as TypedDicts, and the guards
that narrow raw JSON for the type checker.

Writing and reading are typed differently, on purpose:

- What chainsum writes is built as these TypedDicts (``ChatTextPart(type="text", text=...)``), so a misspelt key
  or a value of the wrong type in a wire object is a type error. A key that a round trip may leave out (because
  the input did not have it) is not required. The shapes name the keys chainsum knows; unknown keys kept from
  the input (``extras[NAME]["fields"]``) are put back by `with_fields` (or `_openai_common.apply_layout`), and
  blocks chainsum has no mapping for (`Opaque`) are written back verbatim: the unions below include a plain
  ``dict[str, Any]`` where such a value can stand.
- What chainsum reads is untrusted: a loaded document stays ``dict[str, Any]`` and ``list[Any]`` until each value
  has been checked, and the readers keep their ``isinstance`` checks. Typing raw input as one of these TypedDicts
  would promise what nobody has checked yet (and make the type checker call those checks unnecessary).
  `is_object` and `is_list` are the checks that also narrow a raw value, in place of a ``cast`` after
  ``isinstance``.

The names follow the API references' own types (OpenAI's ``ChatCompletionMessageParam``, Anthropic's
``MessageParam`` and ``ContentBlockParam``) without depending on either SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, Required, TypeAlias, TypedDict, TypeGuard, TypeVar, cast

__all__ = [
    "AnthropicBase64Source",
    "AnthropicBlock",
    "AnthropicDocumentBlock",
    "AnthropicImageBlock",
    "AnthropicMessage",
    "AnthropicRedactedThinkingBlock",
    "AnthropicTextBlock",
    "AnthropicTextSource",
    "AnthropicThinkingBlock",
    "AnthropicToolResultBlock",
    "AnthropicToolUseBlock",
    "AnthropicURLSource",
    "ChatContentPart",
    "ChatCustom",
    "ChatFileData",
    "ChatFilePart",
    "ChatFunction",
    "ChatImagePart",
    "ChatImageURL",
    "ChatMessage",
    "ChatRefusalPart",
    "ChatTextPart",
    "ChatToolCall",
    "is_list",
    "is_object",
    "with_fields",
]

_W = TypeVar("_W", bound=Mapping[str, Any])


def is_object(value: object) -> TypeGuard[dict[str, Any]]:
    """Whether a raw JSON value is an object (its keys are strings: JSON has no other kind)."""
    return isinstance(value, dict)


def is_list(value: object) -> TypeGuard[list[Any]]:
    """Whether a raw JSON value is a list (its items are still unchecked)."""
    return isinstance(value, list)


def with_fields(wire: _W, fields: Mapping[str, Any] | None) -> _W:
    """`wire` (a wire object just built) with the unknown keys `fields` added, in place: a key it already has keeps
    its position and takes the value in `fields`, as ``{**wire, **fields}`` would. The one place a TypedDict is
    widened to hold keys it does not name."""
    if fields:
        cast("dict[str, Any]", wire).update(fields)
    return wire


# --- OpenAI Chat Completions -----------------------------------------------------------------------------------


class ChatFunction(TypedDict):
    """A tool call's ``function``, and the assistant's legacy ``function_call``."""

    name: str
    arguments: str
    """The arguments as the model wrote them (JSON text, not parsed)."""


class ChatCustom(TypedDict):
    """A custom tool call's ``custom``."""

    name: str
    input: str
    """Free-form text, not JSON."""


class ChatToolCall(TypedDict, total=False):
    """One entry of an assistant message's ``tool_calls``: a ``function`` or a ``custom`` call."""

    id: Required[str]
    type: str
    """``"function"`` or ``"custom"``; left out when the input left it out (a ``function`` call)."""
    function: ChatFunction
    custom: ChatCustom


class ChatTextPart(TypedDict):
    type: Literal["text"]
    text: str


class ChatRefusalPart(TypedDict):
    """An assistant's refusal given as a content part."""

    type: Literal["refusal"]
    refusal: str


class ChatImageURL(TypedDict):
    url: str
    """An ``https:`` URL or a ``data:`` URL (``detail`` and other keys are unknown fields)."""


class ChatImagePart(TypedDict):
    type: Literal["image_url"]
    image_url: ChatImageURL | str
    """An object, or the bare URL string some clients send (kept as they sent it)."""


class ChatFileData(TypedDict, total=False):
    """A file part's ``file``: inline data and a name (an uploaded ``file_id`` is an unknown field)."""

    file_data: str
    """A ``data:`` URL."""
    filename: str


class ChatFilePart(TypedDict):
    type: Literal["file"]
    file: ChatFileData


ChatContentPart: TypeAlias = ChatTextPart | ChatRefusalPart | ChatImagePart | ChatFilePart | dict[str, Any]
"""One part of a ``content`` list; a plain dict for a part of another type (``input_audio``, ...), verbatim."""


class ChatMessage(TypedDict, total=False):
    """One Chat Completions message, as chainsum writes it: which keys appear depends on the role."""

    role: Required[str]
    """``system``, ``developer``, ``user``, ``assistant``, ``tool``, or the legacy ``function``."""
    content: str | list[ChatContentPart] | None
    name: str
    refusal: str
    """The assistant's refusal."""
    tool_calls: list[ChatToolCall | dict[str, Any]]
    """The assistant's calls; a plain dict for a call of an unknown type, verbatim."""
    function_call: ChatFunction
    """The assistant's legacy single call."""
    tool_call_id: str
    """The call a ``tool`` message answers."""


# --- Anthropic Messages ----------------------------------------------------------------------------------------


class AnthropicBase64Source(TypedDict):
    type: Literal["base64"]
    media_type: str | None
    """None only for a ``data:`` URL that named no media type (written as found)."""
    data: str


class AnthropicURLSource(TypedDict):
    type: Literal["url"]
    url: str


class AnthropicTextSource(TypedDict):
    """A plain-text document's source."""

    type: Literal["text"]
    media_type: str
    data: str


class AnthropicTextBlock(TypedDict):
    type: Literal["text"]
    text: str


class AnthropicImageBlock(TypedDict):
    type: Literal["image"]
    source: AnthropicBase64Source | AnthropicURLSource


class AnthropicDocumentBlock(TypedDict):
    type: Literal["document"]
    source: AnthropicBase64Source | AnthropicURLSource | AnthropicTextSource
    title: NotRequired[str]


class AnthropicToolUseBlock(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]
    """The arguments, a JSON object."""


class AnthropicThinkingBlock(TypedDict):
    type: Literal["thinking"]
    thinking: str
    signature: NotRequired[str]
    """Left out only when the input had none."""


class AnthropicRedactedThinkingBlock(TypedDict):
    type: Literal["redacted_thinking"]
    data: str


class AnthropicToolResultBlock(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    content: NotRequired[str | list[AnthropicBlock]]
    """Text, or blocks (text, image, document; a block `ToolResult` content has no slot for is written back from
    its JSON text)."""
    is_error: NotRequired[bool]


AnthropicBlock: TypeAlias = (
    AnthropicTextBlock
    | AnthropicImageBlock
    | AnthropicDocumentBlock
    | AnthropicToolUseBlock
    | AnthropicToolResultBlock
    | AnthropicThinkingBlock
    | AnthropicRedactedThinkingBlock
    | dict[str, Any]
)
"""One content block; a plain dict for a block chainsum has no mapping for (server tools, search results, ...),
verbatim."""


class AnthropicMessage(TypedDict):
    """One Anthropic message. The system prompt is not one (it is the request's ``system``); a ``system`` message
    here is the ``mid-conversation-system`` beta's instruction inside the conversation."""

    role: Literal["user", "assistant", "system"]
    content: str | list[AnthropicBlock]
