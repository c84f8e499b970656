"""Canonical message values, their sizes, and chainsum's own lossless JSON form."""

from ._codec import MESSAGE_SCHEMA, message_from_dict, message_to_dict, messages_from_list, messages_to_list
from ._model import (
    ROLES,
    Extras,
    File,
    Image,
    Message,
    Opaque,
    Part,
    Reasoning,
    ResultPart,
    Role,
    Text,
    ToolCall,
    ToolResult,
    utf8_len,
)
from ._size import message_size, part_size

__all__ = [
    "MESSAGE_SCHEMA",
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
    "message_from_dict",
    "message_size",
    "message_to_dict",
    "messages_from_list",
    "messages_to_list",
    "part_size",
    "utf8_len",
]
