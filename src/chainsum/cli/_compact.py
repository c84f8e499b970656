"""``chainsum compact``: shrink a conversation to a token budget with a strategy and a summarizer."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..formats import DUMPABLE, Conversation, Dropped, dump
from ..rules import PROVIDERS
from ._io import console, fail, read_conversation, user_errors, write_json
from ._options import BaseUrlOpt, FileArg, FormatOpt, OutOpt, SummarizerOpt

__all__ = ["STRATEGIES", "compact_cmd"]

STRATEGIES = ("auto", "sections", "safe-split", "ratio", "mask")


def _strategy(name: str) -> Any:
    from .. import strategies as s

    match name:
        case "auto":
            return s.AutoStrategy()
        case "sections":
            return s.SectionsStrategy()
        case "safe-split":
            return s.SafeSplitStrategy()
        case "ratio":
            return s.RatioStrategy()
        case "mask":
            return s.MaskStrategy()
        case _:
            fail(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}")


def _print_plans(result: Any) -> None:
    out = console()
    if not result.plans:
        out.print("nothing to do: the conversation already fits")
    for r, plan in enumerate(result.plans):
        out.print(f"[bold]round {r + 1}[/]" + (f" — {plan.note}" if plan.note else ""))
        for step in plan.steps:
            where = f"messages {step.start}..{step.end - 1}" if step.kind == "summarize" else f"message {step.index}"
            out.print(f"  [magenta]{step.kind}[/] {where}: {step.reason}")
    out.print(f"estimated tokens: {result.tokens_before} -> {result.tokens_after}")


def compact_cmd(
    file: FileArg,
    budget: Annotated[int | None, typer.Option("--budget", help="Target size in tokens.")] = None,
    strategy: Annotated[str, typer.Option("--strategy", help=f"One of {', '.join(STRATEGIES)}.")] = "auto",
    summarizer: SummarizerOpt = "extractive",
    base_url: BaseUrlOpt = None,
    provider: Annotated[
        str | None,
        typer.Option("--provider", "-p", help="Target provider: its rules are enforced and its format written."),
    ] = None,
    format: FormatOpt = None,
    output: OutOpt = None,
    report: Annotated[str | None, typer.Option("--report", help="Write the JSON report here.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan; call no model.")] = False,
    hard_limit: Annotated[
        int | None,
        typer.Option(
            "--hard-limit",
            help="Most tokens the model accepts (its context window): over it, auto may clip the current turn's "
            "tool output as a last resort.",
        ),
    ] = None,
) -> None:
    """Compact the conversation to fit a token budget; output in the input's format (or the provider's)."""
    from ..strategies import compact
    from ..summarize.llm import make_summarizer
    from ..tokens import get_counter

    if provider is not None and provider not in PROVIDERS:
        fail(f"unknown provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
    if budget is not None and budget <= 0:
        fail(f"--budget must be a positive number of tokens, got {budget}")
    if hard_limit is not None and (hard_limit <= 0 or (budget is not None and hard_limit < budget)):
        fail(f"--hard-limit must be a positive number of tokens, at least --budget, got {hard_limit}")
    with user_errors():
        conv = read_conversation(file, format)
        strat = _strategy(strategy)
        try:
            summ = make_summarizer(summarizer, base_url=base_url)
        except ValueError as exc:
            fail(str(exc))
        if summarizer.strip().lower().startswith("litellm:"):
            import litellm  # pyright: ignore[reportMissingTypeStubs]

            litellm.suppress_debug_info = True  # its error banners go to stdout, which carries our output
        target = provider or ("openai" if conv.format not in PROVIDERS else conv.format)
        counter = get_counter("heuristic")
        with Progress(
            TextColumn("summarizing"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console(stderr=True),
            transient=True,
            disable=dry_run,
        ) as bar:
            task = bar.add_task("summarize", total=None)

            def progress(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            result = asyncio.run(
                compact(
                    conv.messages,
                    strat,
                    summarizer=summ,
                    counter=counter,
                    budget=budget,
                    hard_limit=hard_limit,
                    provider=target,
                    dry_run=dry_run,
                    progress=progress,
                )
            )
        if report is not None:
            write_json(result.report(), report)
        if dry_run:
            _print_plans(result)
            return
        for e in result.errors:
            console(stderr=True).print(f"[yellow]summarizer error[/] {e} (originals kept)")
        out_format = provider or (conv.format if conv.format in DUMPABLE else "anthropic")
        dropped: list[Dropped] = []
        doc = dump(Conversation(tuple(result.messages), conv.format, conv.envelope), to=out_format, dropped=dropped)
    for d in dropped:
        console(stderr=True).print(f"[yellow]dropped[/] {d}")
    console(stderr=True).print(
        f"tokens {result.tokens_before} -> {result.tokens_after}, messages {result.messages_before} -> "
        f"{result.messages_after}, {result.summarizer_calls} summarizer calls, valid for {target}: {result.valid}"
    )
    write_json(doc, output)
