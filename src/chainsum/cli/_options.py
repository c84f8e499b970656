"""The options several commands share, declared once so that their names, short forms and help read the same
everywhere (``chainsum compact --help`` and ``chainsum replay --help`` describe ``--summarizer`` alike), and the
configuration both read: ``SUMMARIZATION_*`` from the environment and ``.env``, with command-line options on top."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

import typer

from ..formats import FORMATS
from ..manager import ConfigError, ManagerConfig
from ..strategies import STRATEGIES
from ..summarize.llm import SUMMARIZER_SPECS, split_spec
from ._io import fail

__all__ = [
    "BaseUrlOpt",
    "FileArg",
    "FormatOpt",
    "JsonOpt",
    "OutOpt",
    "StrategyOpt",
    "SummarizerOpt",
    "config_from_env",
    "tokens",
]

FileArg = Annotated[
    str, typer.Argument(metavar="FILE", help="Conversation file in any supported format; - reads standard input.")
]
FormatOpt = Annotated[
    str | None, typer.Option("--format", "-f", help=f"Input format (detected when omitted): {', '.join(FORMATS)}.")
]
OutOpt = Annotated[str | None, typer.Option("--output", "-o", help="Write here instead of standard output.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on standard output.")]
SummarizerOpt = Annotated[
    str | None,
    typer.Option(
        "--summarizer",
        help="extractive (default, no model) | openai:MODEL | anthropic:MODEL | litellm:MODEL | bedrock:MODEL | "
        "gemini:MODEL | a Bedrock model id (us.amazon.nova-micro-v1:0) or a gemini-... model, no prefix needed; "
        "default: SUMMARIZATION_MODEL_ID",
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="Endpoint for the summarizer (an OpenAI-compatible server such as vLLM or Ollama, a gateway, boto3's "
        "endpoint_url for Bedrock); default: SUMMARIZATION_BASE_URL.",
    ),
]
StrategyOpt = Annotated[
    str | None,
    typer.Option("--strategy", help=f"One of {', '.join(STRATEGIES)}; default: SUMMARIZATION_STRATEGY or auto."),
]


def tokens(value: str | None, option: str) -> int | None:
    """A token count given on the command line, by the library's rule (`executor.check_budget`); one line and exit
    2 when it is not one."""
    from ..executor import check_budget

    try:
        return check_budget(value, option)
    except ValueError as exc:
        fail(str(exc))


def config_from_env(
    *, strategy: str | None = None, summarizer: str | None = None, base_url: str | None = None
) -> ManagerConfig:
    """``SUMMARIZATION_*`` (environment, then ``.env``) with the options given on the command line on top; a bad
    value exits 2 naming the variable or option."""
    try:
        config = ManagerConfig.from_env()
    except ConfigError as exc:
        fail(str(exc))
    if strategy is not None:
        if strategy not in STRATEGIES:
            fail(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
        config = replace(config, strategy=strategy)
    if summarizer is not None:
        provider, colon, _ = summarizer.partition(":")
        if colon and split_spec(summarizer) is None:
            # the flag takes the documented forms only (the environment is lenient: a model name with a colon
            # there is an OpenAI-compatible model), so a mistyped provider is a usage error, not a model name
            fail(
                f"--summarizer {summarizer!r}: unknown provider {provider!r}; use one of: {', '.join(SUMMARIZER_SPECS)}"
                " (a model name with a colon goes after it: openai:llama3:8b)"
            )
        config = replace(config, model_id=summarizer, model_preference=None)
    if base_url is not None:
        config = replace(config, base_url=base_url)
    return config
