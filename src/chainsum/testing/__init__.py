"""Test support shipped with the library: chain generators, predefined chains, the shared corpora reader, a
scripted summarizer double and a loopback fake LLM server."""

from .corpora import CorpusDocument, corpora_root, iter_documents
from .fake_llm import FakeLLMServer
from .generators import PREDEFINED, ChainConfig, generate_chain, generate_complex_chain, generate_large_chain
from .scripted import ScriptedCall, ScriptedSummarizer, default_summary

__all__ = [
    "PREDEFINED",
    "ChainConfig",
    "CorpusDocument",
    "FakeLLMServer",
    "ScriptedCall",
    "ScriptedSummarizer",
    "corpora_root",
    "default_summary",
    "generate_chain",
    "generate_complex_chain",
    "generate_large_chain",
    "iter_documents",
]
