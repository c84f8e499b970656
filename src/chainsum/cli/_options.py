"""The options several commands share, declared once so that their names, short forms and help read the same
everywhere (``chainsum compact --help`` and ``chainsum replay --help`` describe ``--summarizer`` alike)."""

from __future__ import annotations

from typing import Annotated

import typer

from ..formats import FORMATS

__all__ = ["BaseUrlOpt", "FileArg", "FormatOpt", "JsonOpt", "OutOpt", "SummarizerOpt"]

FileArg = Annotated[str, typer.Argument(help="Conversation file in any supported format; - reads standard input.")]
FormatOpt = Annotated[
    str | None, typer.Option("--format", "-f", help=f"Input format (detected when omitted): {', '.join(FORMATS)}.")
]
OutOpt = Annotated[str | None, typer.Option("--output", "-o", help="Write here instead of standard output.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on standard output.")]
SummarizerOpt = Annotated[
    str,
    typer.Option(
        "--summarizer", help="extractive (default, no model) | openai:MODEL | anthropic:MODEL | litellm:MODEL"
    ),
]
BaseUrlOpt = Annotated[
    str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint for the summarizer (vLLM, Ollama, ...).")
]
