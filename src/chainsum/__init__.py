"""chainsum keeps LLM conversations inside their context window.

It reads a chat history in any common wire format into canonical messages, builds the chain tree (sections,
headers, body pairs) with sizes, checks and repairs it against a provider's rules, compacts it to a token budget
with a strategy and a summarizer, and writes it back in any format. The names here are the ones most users
need; each layer's package has the rest.
"""

from .chain import BodyPair, Chain, Header, PairKind, Section
from .errors import ChainError, ChainsumError, FormatError
from .executor import CompactResult, compact, compact_sync
from .formats import Conversation, Dropped, detect_format, dump, load
from .manager import CompactedDocument, ContextManager, ManagerConfig, Prepared, compact_document, compact_document_sync
from .messages import File, Image, Message, Opaque, Reasoning, Text, ToolCall, ToolResult
from .rules import Problem, repair, validate
from .strategies import AutoStrategy
from .summarize import ExtractiveSummarizer
from .tokens import HeuristicCounter

__all__ = [
    "AutoStrategy",
    "BodyPair",
    "Chain",
    "ChainError",
    "ChainsumError",
    "CompactResult",
    "CompactedDocument",
    "ContextManager",
    "Conversation",
    "Dropped",
    "ExtractiveSummarizer",
    "File",
    "FormatError",
    "Header",
    "HeuristicCounter",
    "Image",
    "ManagerConfig",
    "Message",
    "Opaque",
    "PairKind",
    "Prepared",
    "Problem",
    "Reasoning",
    "Section",
    "Text",
    "ToolCall",
    "ToolResult",
    "compact",
    "compact_document",
    "compact_document_sync",
    "compact_sync",
    "detect_format",
    "dump",
    "load",
    "repair",
    "validate",
]
__version__ = "0.1.0"
