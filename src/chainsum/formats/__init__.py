"""Wire formats: read any supported chat-history document into canonical messages, and write them back.

``load(data)`` detects the format (or takes ``format=``) and returns a `Conversation`; ``dump(conv, to=...)``
writes it in a format, returning the document and what the target could not express. ``as_messages(items)`` is
what the library's entry points accept as a history: `Message` objects, or wire dicts of any format.
``wire_indexes(conv)`` maps canonical message indexes back to the file's own. Each format lives in its
own module with ``load``/``dump``/``sniff`` (see `_base`).
"""

from __future__ import annotations

from ._base import Conversation, Dropped
from ._positions import wire_indexes
from ._registry import (
    DUMPABLE,
    FORMAT_PROVIDERS,
    FORMATS,
    as_messages,
    detect_format,
    dump,
    load,
    output_target,
    parse_text,
)

__all__ = [
    "DUMPABLE",
    "FORMATS",
    "FORMAT_PROVIDERS",
    "Conversation",
    "Dropped",
    "as_messages",
    "detect_format",
    "dump",
    "load",
    "output_target",
    "parse_text",
    "wire_indexes",
]
