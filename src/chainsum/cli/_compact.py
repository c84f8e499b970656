"""``chainsum compact``: shrink a conversation to a token budget with a strategy and a summarizer.

Thin: the configuration (``SUMMARIZATION_*`` and ``.env``), the strategy table, the budget rules and the target
provider and output format all come from the library, so the command behaves as the Python API does. Exit 0 when the
result fits the budget, is valid for the provider and no summarizer failed; exit 1 otherwise, each shortfall named
on standard error and in the report.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from ..formats import Conversation, Dropped, dump, output_target
from ..rules import PROVIDERS
from ._io import EXIT_PROBLEMS, console, fail, progress_bar, read_conversation, user_errors, write_json
from ._options import BaseUrlOpt, FileArg, FormatOpt, OutOpt, StrategyOpt, SummarizerOpt, config_from_env, tokens

__all__ = ["compact_cmd"]


def _print_plans(result: Any) -> None:
    out = console()
    if not any(p.steps for p in result.plans):
        out.print("nothing to do: the conversation already fits")
    for r, plan in enumerate(result.plans):
        if not plan.steps:
            continue
        out.print(f"[bold]round {r + 1}[/]" + (f" — {plan.note}" if plan.note else ""))
        for step in plan.steps:
            where = (
                f"messages {step.start}..{step.end - 1}"
                if step.kind in ("summarize", "evict")
                else f"message {step.index}"
            )
            out.print(f"  [magenta]{step.kind}[/] {where}: {step.reason}")
    out.print(
        f"expected: tokens {result.tokens_before} -> {result.tokens_after}, {result.summarizer_calls} summarizer "
        "call(s)"
    )


def compact_cmd(
    file: FileArg,
    budget: Annotated[
        str | None, typer.Option("--budget", help="Target size in tokens (0: as small as can be).")
    ] = None,
    strategy: StrategyOpt = None,
    summarizer: SummarizerOpt = None,
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
        str | None,
        typer.Option(
            "--hard-limit",
            help="Most tokens the model accepts (its context window): over it, auto may clip the current turn's "
            "tool output or move old messages to the archive as a last resort.",
        ),
    ] = None,
) -> None:
    """Compact the conversation to fit a token budget; output in the input's format (or the provider's)."""
    from ..executor import check_hard_limit, compact_sync
    from ..manager import compact_options
    from ..tokens import get_counter

    if provider is not None and provider not in PROVIDERS:
        fail(f"unknown provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
    wanted = tokens(budget, "--budget")
    limit = tokens(hard_limit, "--hard-limit")
    try:
        check_hard_limit(limit, wanted, "--hard-limit", "--budget")
    except ValueError as exc:
        fail(str(exc))
    config = config_from_env(strategy=strategy, summarizer=summarizer, base_url=base_url)
    with user_errors(file):
        conv = read_conversation(file, format)
        try:
            options = compact_options(config)
        except ValueError as exc:
            fail(f"--summarizer {summarizer!r}: {exc}" if summarizer is not None else str(exc))
        if config.model_id is not None and config.model_id.strip().lower().startswith("litellm:"):
            import litellm  # pyright: ignore[reportMissingTypeStubs]

            litellm.suppress_debug_info = True  # its error banners go to stdout, which carries our output
        target, out_format = output_target(conv.format, provider)
        err = console(stderr=True)
        with progress_bar(err, "summarizer calls", enabled=not dry_run) as bar:
            task = bar.add_task("summarizing", total=None, visible=False)

            def progress(done: int, total: int, phase: str) -> None:
                """`compact`'s report: calls done of the planned total, in the round doing `phase`."""
                bar.update(
                    task, completed=done, total=max(total, done, 1), description=" ".join(phase.split()), visible=True
                )

            result = compact_sync(
                conv.messages,
                **options,
                counter=get_counter("heuristic"),
                budget=wanted,
                hard_limit=limit,
                provider=target,
                dry_run=dry_run,
                progress=progress,
            )
        if report is not None:
            write_json(result.report(), report)
        if dry_run:
            _print_plans(result)
            return
        dropped: list[Dropped] = []
        doc = dump(Conversation(tuple(result.messages), conv.format, conv.envelope), to=out_format, dropped=dropped)
    for change in result.changes:
        err.print(f"[yellow]changed[/] {change}")
    for d in dropped:
        err.print(f"[yellow]dropped[/] {d}")
    err.print(
        f"tokens {result.tokens_before} -> {result.tokens_after}"
        + (f" (budget {result.budget})" if result.budget is not None else "")
        + f", messages {result.messages_before} -> {result.messages_after}, {result.summarizer_calls} summarizer "
        f"call(s), valid for {target}: {result.valid}"
    )
    write_json(doc, output)
    problems: list[str] = []
    if not result.fits:
        problems.append(
            f"the budget was not reached: {result.tokens_after} tokens for a budget of {result.budget} (what no "
            "strategy may remove, the system prompt and the current turn, may be larger)"
        )
    if not result.valid:
        problems.append(f"the output breaks {target}'s rules: {result.problems[0]}")
    problems += [f"{e.error} (its messages were kept)" for e in result.errors]
    for problem in dict.fromkeys(problems):
        print(f"chainsum: {problem}", file=sys.stderr)
    if problems:
        raise SystemExit(EXIT_PROBLEMS)
