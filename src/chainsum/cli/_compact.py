"""``chainsum compact``: shrink a conversation to a token budget with a strategy and a summarizer.

Thin: it reads the file and the options, and `chainsum.manager.compact_document` does the rest with the
`CompactionSettings` of the configuration (``SUMMARIZATION_*`` and ``.env``): the strategy behind the manager's tail
guard, the budget rules, the target provider and the output format, so the command compacts as the Python API and
the context manager do. Exit 0 when the
result fits the budget (for ``--budget 0``: whatever the strategy could reach), is valid for the provider and no
summarizer failed; exit 1 otherwise, each shortfall named on standard error and in the report.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, assert_never

import typer
from rich.markup import escape

from ..rules import PROVIDERS
from ..strategies import Clip, DropBlocks, Evict, Mask, Step, Summarize, SummarizePart
from ._io import EXIT_PROBLEMS, console, fail, read_conversation, user_errors, write_json
from ._options import (
    BaseUrlOpt,
    FileArg,
    FormatOpt,
    OutOpt,
    StrategyOpt,
    SummarizerOpt,
    config_from_env,
    tokens,
)
from ._progress import logs_to, progress_bar

if TYPE_CHECKING:
    from ..executor import CompactResult
    from ..formats import Conversation
    from ..manager import CompactedDocument, CompactionSettings

__all__ = ["compact_cmd"]


def _where(step: Step) -> str:
    """What `step` does to which messages, as a dry run prints it (indices as the library counts them)."""
    match step:
        case Summarize(start=start, end=end):
            return f"summarize messages {start}..{end - 1}"
        case SummarizePart(index=index, part=part):
            return f"summarize part {part} of message {index}"
        case Mask(index=index, part=part):
            return f"mask part {part} of message {index}"
        case Clip(index=index, part=part, head=head, tail=tail):
            return f"clip part {part} of message {index} to its first {head} and last {tail} characters"
        case DropBlocks(index=index, count=count):
            return f"archive the oldest {count} summary block(s) of message {index}"
        case Evict(start=start, end=end):
            return f"archive messages {start}..{end - 1}"
        case _:
            assert_never(step)


def _step_line(step: Step, note: str) -> str:
    """`step` as one line: what it does and why, with what the line says already left out of the why.

    Strategies word a step's reason to stand alone (a log line, the report), so it may repeat the span (auto:
    "messages 1..18: the oldest ..."), the step itself (safe-split ends in "; summarize messages 1..16") or the
    round's note printed just above it (ratio); printed as they are, the plan read "summarize messages 1..18:
    messages 1..18: ...". Clauses are the reason's ``; ``-separated parts."""
    where = _where(step)
    span = where.partition(" ")[2]
    reason = step.reason.removeprefix(f"{span}: ")
    skip = {where, span, *note.split("; ")}
    why = "; ".join(c for c in reason.split("; ") if c.strip() and c not in skip)
    return f"[magenta]{escape(where)}[/]" + (f": {escape(why)}" if why else "")


def _print_plans(result: CompactResult) -> None:
    out = console()
    if not any(p.steps for p in result.plans):
        out.print("nothing to do: the conversation already fits")
    for r, plan in enumerate(result.plans):
        if not plan.steps:
            continue
        out.print(f"[bold]round {r + 1}[/]" + (f" — {escape(plan.note)}" if plan.note else ""))
        for step in plan.steps:
            out.print(f"  {_step_line(step, plan.note)}")
    out.print(
        f"expected: tokens {result.tokens_before} -> {result.tokens_after}, {result.summarizer_calls} summarizer "
        "call(s)"
    )


def _why_not_reached(conv: Conversation, budget: int, *, keep_pair: bool) -> str:
    """Which part alone is over `budget` (`chainsum.executor.budget_floor`, with the counter `compact_document`
    uses), or, when none is, that the budget could have been reached: a shortfall of chainsum's, said as one."""
    from ..executor import budget_floor
    from ..tokens import HeuristicCounter

    floor = budget_floor(conv.messages, HeuristicCounter(), budget, keep_pair=keep_pair)
    return floor.shortfall() or (
        f"the system prompt ({floor.system} tokens), the current turn ({floor.turn}) and the smallest summary record "
        f"({floor.record}) fit it, so chainsum fell short of what it could reach"
    )


def _compact(
    conv: Conversation,
    settings: CompactionSettings,
    *,
    budget: int | None,
    hard_limit: int | None,
    provider: str | None,
    dry_run: bool,
    progress: Callable[[int, int, str], object] | None = None,
) -> CompactedDocument:
    """One `chainsum.manager.compact_document_sync` call as this command makes it: the planning dry run and the run
    itself must be the same call but for `dry_run`, or the bar's total would count another run's calls."""
    from ..manager import compact_document_sync

    return compact_document_sync(
        conv,
        settings=settings,
        budget=budget,
        hard_limit=hard_limit,
        provider=provider,
        dry_run=dry_run,
        progress=progress,
    )


def compact_cmd(
    file: FileArg,
    budget: Annotated[
        str | None,
        typer.Option(
            "--budget",
            metavar="TOKENS",
            help="Target size in tokens; 0: as small as the strategy can make it.",
        ),
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
            metavar="TOKENS",
            help="Most tokens the model accepts (its context window): over it, auto may clip the current turn's "
            "tool output or move old messages to the archive as a last resort.",
        ),
    ] = None,
) -> None:
    # The docstring is the command's help: plain text, its first paragraph the line in chainsum --help.
    """Compact a conversation to fit a token budget.

    The output is in the input's format, or the provider's with --provider. Exit 0 when the result fits the budget
    (with --budget 0: when it is as small as the strategy can make it), is valid for the provider and no summarizer
    failed; 1 otherwise, each shortfall named on standard error.
    """
    from ..executor import check_hard_limit
    from ..manager import CompactionSettings

    if provider is not None and provider not in PROVIDERS:
        fail(f"unknown provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
    wanted = tokens(budget, "--budget")
    limit = tokens(hard_limit, "--hard-limit")
    try:
        check_hard_limit(limit, wanted, "--hard-limit", "--budget")
    except ValueError as exc:
        fail(str(exc))
    err = console(stderr=True)
    with logs_to(err):
        config = config_from_env(strategy=strategy, summarizer=summarizer, base_url=base_url)
        with user_errors(file):
            conv = read_conversation(file, format)
            try:
                settings = CompactionSettings.from_config(config)
            except ValueError as exc:
                fail(f"--summarizer {summarizer!r}: {exc}" if summarizer is not None else str(exc))
            if config.model_id is not None and config.model_id.strip().lower().startswith("litellm:"):
                import litellm  # pyright: ignore[reportMissingTypeStubs]

                litellm.suppress_debug_info = True  # its error banners go to stdout, which carries our output
            with progress_bar(err, "summarizer calls", enabled=not dry_run) as bar:
                # The bar's total is the planned number of calls, from a dry run made first, so that it stays put:
                # the executor's own total grows round by round (each round adds its estimate), and the bar ran
                # backwards. With a model, the dry run writes stand-ins and costs nothing beside the calls; with the
                # local extractive summarizer it runs the summarizer (exactly the run's calls then) and costs as
                # much as the run, which is why it is made only when the bar shows.
                planned = 0
                if not bar.disable:
                    dry = _compact(conv, settings, budget=wanted, hard_limit=limit, provider=provider, dry_run=True)
                    planned = dry.result.summarizer_calls
                task = bar.add_task("summarizing", total=max(planned, 1), visible=False)

                def progress(done: int, total: int, phase: str) -> None:
                    """`compact`'s report: calls done (of the planned total, unless the run needs more: a model
                    that writes longer summaries than asked may need another round), in the round doing `phase`."""
                    bar.update(
                        task,
                        completed=done,
                        total=max(planned, done, 1),
                        description=" ".join(phase.split()),
                        visible=planned > 0 or done > 0,
                    )

                compacted = _compact(
                    conv,
                    settings,
                    budget=wanted,
                    hard_limit=limit,
                    provider=provider,
                    dry_run=dry_run,
                    progress=progress,
                )
            result, target = compacted.result, compacted.provider
            if report is not None:
                write_json(compacted.report(), report)
            if dry_run:
                _print_plans(result)
                return
    # "As small as can be" is the library's meaning of a budget of 0 (`executor.check_budget`, shared with the HTTP
    # service): whatever the strategy reached is the answer, not a shortfall. Exit 1 for it made a scripted
    # "--budget 0" fail every time while its help promised it.
    smallest = result.budget == 0
    for change in result.changes:
        err.print(f"[yellow]changed[/] {escape(change)}")
    for d in compacted.dropped:
        err.print(f"[yellow]dropped[/] {escape(str(d))}")
    asked = (
        " (budget 0: as small as the strategy can make it)"
        if smallest
        else f" (budget {result.budget})"
        if result.budget is not None
        else ""
    )
    err.print(
        f"tokens {result.tokens_before} -> {result.tokens_after}{asked}, messages {result.messages_before} -> "
        f"{result.messages_after}, {result.summarizer_calls} summarizer call(s){_coverage(result.model_coverage)}, "
        f"valid for {target}: {result.valid}"
    )
    write_json(compacted.document, output)
    problems: list[str] = []
    if not result.fits and not smallest and result.budget is not None:
        problems.append(
            f"the budget was not reached: {result.tokens_after} tokens for a budget of {result.budget}: "
            + _why_not_reached(conv, result.budget, keep_pair=limit is not None)
        )
    if not result.valid:
        problems.append(f"the output breaks {target}'s rules: {result.problems[0]}")
    problems += [f"{e.error} (its messages were kept)" for e in result.errors]
    for problem in dict.fromkeys(problems):
        print(f"chainsum: {problem}", file=sys.stderr)
    if problems:
        raise SystemExit(EXIT_PROBLEMS)


def _coverage(share: float | None) -> str:
    """`` (the model read 100.0 % of what it summarized)`` after the calls, when a model summarizer was called."""
    return "" if share is None else f" (the model read {100 * share:.1f} % of what it summarized)"
