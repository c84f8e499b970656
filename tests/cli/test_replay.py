"""``chainsum replay``, ``expand`` and ``search`` as a user runs them: the report's keys and invariants on the
bundled example with a small window, the archive kept with ``--db``, both plots, and bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from chainsum.cli._app import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "support-session.json")
TURN_KEYS = {"context_tokens", "cached_input_tokens", "compacted", "valid", "reason", "record_ids", "cost_usd"}
TOTAL_KEYS = {
    "requests",
    "compactions",
    "summarizer_calls",
    "summarizer_input_tokens",
    "max_context_tokens",
    "input_tokens",
    "cached_input_tokens",
    "cache_hit_share",
    "cost_usd",
}
runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    tmp = tmp_path_factory.mktemp("replay")
    db, report = tmp / "archive.db", tmp / "report.json"
    code, _, stderr = run("replay", EXAMPLE, "--context-window", "1500", "--db", str(db), "--report", str(report))
    assert code == 0, stderr
    assert "requests" in stderr and "compactions" in stderr
    return json.loads(report.read_text()), db


def test_report_keys_and_invariants(replayed: tuple[dict[str, Any], Path]) -> None:
    report, _ = replayed
    turns, totals = report["turns"], report["totals"]
    assert report["session"] == "support-session"
    assert TOTAL_KEYS <= set(totals)
    assert all(TURN_KEYS <= set(t) for t in turns)
    assert totals["requests"] == len(turns) > 0
    assert all(t["valid"] is True for t in turns)
    assert totals["compactions"] == sum(t["compacted"] for t in turns) >= 1
    for key in ("summarizer_calls", "summarizer_input_tokens", "cached_input_tokens"):
        assert totals[key] == sum(t[key] for t in turns)
    assert totals["input_tokens"] == sum(t["context_tokens"] for t in turns)
    assert totals["max_context_tokens"] == max(t["context_tokens"] for t in turns)
    assert totals["cost_usd"] == pytest.approx(sum(t["cost_usd"] for t in turns))
    assert totals["cached_input_tokens"] <= totals["input_tokens"]
    assert totals["cache_hit_share"] == pytest.approx(totals["cached_input_tokens"] / totals["input_tokens"], abs=1e-6)
    assert all(t["cached_input_tokens"] <= t["context_tokens"] for t in turns)


def test_expand_and_search_the_archive(replayed: tuple[dict[str, Any], Path]) -> None:
    report, db = replayed
    ids = [rid for t in report["turns"] for rid in t["record_ids"]]
    assert ids
    summarized: list[dict[str, Any]] = []
    for rid in ids:
        code, out, err = run("expand", rid, "--db", str(db), "--json")
        assert code == 0, err
        originals = json.loads(out)
        assert len(originals) > 0
        summarized.extend(originals)
        code, text, _ = run("expand", rid, "--db", str(db))
        assert code == 0 and text.count("--- ") == len(originals)
    early = next(m for m in summarized if m["role"] == "assistant" and m["parts"][0]["kind"] == "text")
    word = max(early["parts"][0]["text"].replace("'", " ").split(), key=len).strip(".,:`")
    code, out, _ = run("search", word, "--db", str(db), "--json")
    assert code == 0
    hits = json.loads(out)
    assert hits and all(h["session"] == "support-session" for h in hits)
    assert any(word.lower() in h["snippet"].lower() for h in hits)
    code, out, _ = run("search", word, "--db", str(db), "--session", "another")
    assert code == 0 and out == ""


def test_same_session_twice_in_one_db_is_refused(replayed: tuple[dict[str, Any], Path]) -> None:
    _, db = replayed
    code, _, err = run("replay", EXAMPLE, "--context-window", "1500", "--db", str(db))
    assert code == 2 and "already replayed" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("suffix", [".png", ".html"])
@pytest.mark.slow
def test_plots(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"plot{suffix}"
    code, _, err = run("replay", EXAMPLE, "--model", "gpt-4", "--plot", str(out))
    assert code == 0, err
    data = out.read_bytes()
    if suffix == ".png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
    else:
        text = data.decode()
        assert "<svg" in text and "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_report_to_stdout_and_prices(tmp_path: Path) -> None:
    code, out, _ = run("replay", EXAMPLE, "-w", "100000", "--report", "-", "--price-input", "0", "--price-cached", "0")
    assert code == 0
    report = json.loads(out)
    assert report["totals"]["compactions"] == 0 and report["totals"]["cost_usd"] == 0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["replay", "missing.json", "-w", "1000"], "no such file"),
        (["replay", EXAMPLE, "-w", "0"], "--context-window"),
        (["replay", EXAMPLE], "--context-window"),
        (["replay", EXAMPLE, "--model", "no-such-model-xyz"], "no-such-model-xyz"),
        (["replay", EXAMPLE, "-w", "1000", "--strategy", "nope"], "unknown strategy"),
        (["replay", EXAMPLE, "-w", "1000", "--plot", "out.svg"], "--plot"),
        (["replay", EXAMPLE, "-w", "1000", "--summarizer", "bogus:x"], "--summarizer"),
        (["expand", "no-such-id", "--db", "missing.db"], "no such database"),
        (["search", "x", "--db", "missing.db"], "no such database"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], needle: str) -> None:
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert needle in err and len(err.strip().splitlines()) == 1


def test_unknown_summary_id(replayed: tuple[dict[str, Any], Path]) -> None:
    _, db = replayed
    code, _, err = run("expand", "no-such-id", "--db", str(db))
    assert code == 2 and "no-such-id" in err and len(err.strip().splitlines()) == 1


def test_a_recording_that_breaks_the_rules_is_flagged_and_repair_fixes_it(tmp_path: Path) -> None:
    doc = [
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "first answer"},
        {"role": "user", "content": ""},
        {"role": "user", "content": "second question"},
        {"role": "assistant", "content": "second answer"},
    ]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(doc))
    code, out, err = run("replay", str(path), "-f", "openai", "-w", "10000", "--provider", "anthropic", "--report", "-")
    assert code == 0 and "breaks" in err
    assert any(t["valid"] is False for t in json.loads(out)["turns"])
    code, out, err = run(
        "replay", str(path), "-f", "openai", "-w", "10000", "--provider", "anthropic", "--repair", "--report", "-"
    )
    assert code == 0 and "breaks" not in err
    assert all(t["valid"] is True for t in json.loads(out)["turns"])


def test_an_unknown_model_points_to_the_option_not_to_python() -> None:
    code, out, err = run("replay", EXAMPLE, "--model", "gtp-4o")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "--model 'gtp-4o'" in err and "--context-window" in err and "close names: gpt-4o" in err
    assert "overrides" not in err and "context_window=" not in err


@pytest.mark.parametrize("window", ["0", "-3"])
def test_a_window_that_is_not_positive_says_so(window: str) -> None:
    code, _, err = run("replay", EXAMPLE, "--context-window", window)
    assert code == 2 and f"--context-window must be a positive number of tokens, got {window}" in err


def test_a_db_that_cannot_be_opened_is_one_line_naming_it(tmp_path: Path) -> None:
    cases = {
        tmp_path: f"{tmp_path}: is a directory, not a database file",
        tmp_path / "no" / "a.db": f"{tmp_path / 'no' / 'a.db'}: cannot open database: its directory does not exist",
    }
    for db, message in cases.items():
        code, _, err = run("replay", EXAMPLE, "-w", "100000", "--db", str(db))
        assert code == 2 and err.strip() == f"chainsum: error: {message}"


def test_no_progress_bar_when_standard_error_is_not_a_terminal() -> None:
    code, _, err = run("replay", EXAMPLE, "-w", "1500")
    assert code == 0
    assert re.match(r"requests +\d+\n", err)
    assert "replaying" not in err and "\x1b" not in err
    assert all(line.strip() and line == line.rstrip() for line in err.splitlines())


def _table(err: str) -> dict[str, str]:
    """The end-of-replay table: name, two spaces or more, value."""
    rows = [re.fullmatch(r"(\S+(?: \S+)*)  +(.+)", line) for line in err.splitlines()]
    assert all(rows), err
    return {row[1]: row[2] for row in rows if row}


def test_replay_ends_with_a_short_table(tmp_path: Path) -> None:
    """Standard error holds seven rows whatever the history's length (it held a line per compaction, 145 lines for
    a long session), each matching the JSON report: requests, compactions, the peak context against the window,
    the estimated cost, the summarizer's part of it (shown at $0 for the extractive summarizer), the model coverage
    (none without a model) and the cache hit share (cached input tokens over input tokens)."""
    report = tmp_path / "r.json"
    code, out, err = run("replay", EXAMPLE, "-w", "1500", "--report", str(report))
    assert code == 0 and out == ""
    totals = json.loads(report.read_text())["totals"]
    assert totals["compactions"] >= 3  # several compactions, and still seven lines
    table = _table(err)
    assert list(table) == [
        "requests",
        "compactions",
        "peak context tokens",
        "estimated cost",
        "of which summarizer",
        "model coverage",
        "cache hit share",
    ]
    assert table["requests"] == f"{totals['requests']:,}"
    assert table["compactions"].startswith(f"{totals['compactions']}, {totals['summarizer_calls']} summarizer call")
    assert table["peak context tokens"] == f"{totals['max_context_tokens']:,} of 1,500"
    assert table["estimated cost"] == f"${totals['cost_usd']:.4f}"
    assert totals["summarizer_input_tokens"] > 0 and totals["summarizer_cost_usd"] == 0  # extractive: no model
    assert table["of which summarizer"] == (
        f"$0.0000 ({totals['summarizer_input_tokens']:,} tokens in, {totals['summarizer_output_tokens']:,} out)"
    )
    assert totals["model_coverage"] is None and table["model coverage"] == "- (no model summarizer configured)"
    share = 100 * totals["cached_input_tokens"] / totals["input_tokens"]
    assert table["cache hit share"] == f"{share:.1f} %" and 0 < share < 100
    assert "request " not in err and "rec_" not in err


def test_verbose_adds_a_line_per_compaction(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    code, _, err = run("replay", EXAMPLE, "-w", "1500", "-v", "--report", str(report))
    assert code == 0
    turns = [t for t in json.loads(report.read_text())["turns"] if t["compacted"]]
    lines = err.splitlines()
    assert lines[: len(turns)] == [
        f"request {t['request']} (message {t['message_index']}): compacted ({t['reason']}) -> {t['context_tokens']} "
        f"tokens; records {', '.join(t['record_ids'])}"
        for t in turns
    ]
    assert list(_table("\n".join(lines[len(turns) :]))) == [
        "requests",
        "compactions",
        "peak context tokens",
        "estimated cost",
        "of which summarizer",
        "model coverage",
        "cache hit share",
    ]
    code, _, long_err = run("replay", EXAMPLE, "-w", "1500", "--verbose")
    assert code == 0 and long_err == err


def test_problem_rows_appear_only_when_there_are_problems(tmp_path: Path) -> None:
    """Requests invalid for the provider are a problem, not a figure: a row for them only when there are any."""
    doc = [
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "first answer"},
        {"role": "user", "content": ""},
        {"role": "user", "content": "second question"},
        {"role": "assistant", "content": "second answer"},
    ]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(doc))
    code, _, err = run("replay", str(path), "-f", "openai", "-w", "10000", "--provider", "anthropic")
    assert code == 0
    table = _table("\n".join(line for line in err.splitlines() if not line.startswith("warning")))
    assert int(table["invalid requests"]) >= 1
    code, _, err = run("replay", EXAMPLE, "-w", "100000")
    assert code == 0 and "invalid requests" not in err and "over the window" not in err


def test_anthropic_recording_warning_counts_messages_as_the_file_does(tmp_path: Path) -> None:
    doc = {
        "system": "be brief",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
            {"role": "user", "content": "where is my result?"},
            {"role": "assistant", "content": "sorry"},
        ],
    }
    path = tmp_path / "anthropic.json"
    path.write_text(json.dumps(doc))
    code, _, err = run("replay", str(path), "-w", "100000")
    assert code == 0
    assert "(first: tool-result-missing at message 1)" in err


def test_replay_with_a_model_reports_what_it_read_of_what_it_summarized(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replay with a model summarizer (an OpenAI-compatible server on loopback) prices its calls and says what
    share of the summarized conversation it read: all of it, by default (issue 32)."""
    pytest.importorskip("openai")
    from chainsum.testing.fake_llm import FakeLLMServer, FakeText

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    report = tmp_path / "r.json"
    with FakeLLMServer(default=FakeText(text="Summary: the user asked for a refund; order A-1 checked.")) as server:
        code, _, err = run(
            "replay", EXAMPLE, "-w", "1500", "--summarizer", "openai:m", "--base-url", server.openai_base_url,
            "--report", str(report),
        )  # fmt: skip
        assert code == 0, err
        assert server.requests
    data = json.loads(report.read_text())
    totals = data["totals"]
    assert totals["summarizer_calls"] > 0 and totals["summarizer_cost_usd"] > 0
    assert totals["model_coverage"] is not None and totals["model_coverage"] >= 0.95
    compacted = [t for t in data["turns"] if t["summarizer_calls"]]
    assert compacted and all(t["model_coverage"] >= 0.95 for t in compacted)
    assert (
        _table(err)["model coverage"]
        == f"{100 * totals['model_coverage']:.1f} % of the summarized text read by the model"
    )
