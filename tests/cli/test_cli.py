"""The CLI as a user runs it: exit codes, one-line errors, JSON output, stdin, and the bundled example."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chainsum.cli._app import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "support-session.json")
runner = CliRunner()

BROKEN_OPENAI = [
    {"role": "system", "content": "sys"},
    {"role": "user", "content": "hi"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    },
    {"role": "user", "content": "are you there?"},
]


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_inspect_example_shows_tree() -> None:
    code, out, _ = run("inspect", EXAMPLE)
    assert code == 0
    assert "section 0" in out and "request_response" in out and "25 messages" in out


def test_inspect_keeps_lines_whole_when_piped(tmp_path: Path) -> None:
    """Piped output is not wrapped at 80 columns, so a long path does not split the summary line (a CI failure)."""
    deep = tmp_path.joinpath(*["a-rather-long-directory-name"] * 4)
    deep.mkdir(parents=True)
    path = deep / "support-session.json"
    path.write_text(Path(EXAMPLE).read_text())
    code, out, _ = run("inspect", str(path))
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith(str(path)) and first.endswith("3 sections, 25 messages, 7.7 KB")


def test_inspect_json() -> None:
    code, out, _ = run("inspect", EXAMPLE, "--json")
    data = json.loads(out)
    assert code == 0 and data["format"] == "openai" and data["messages"] == 25
    assert data["size"] == sum(s["size"] for s in data["sections"])


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini", "bedrock"])
def test_example_is_valid_everywhere(provider: str) -> None:
    code, out, _ = run("validate", EXAMPLE, "--provider", provider, "--json")
    assert code == 0, out
    assert json.loads(out) == {"valid": True, "problems": []}


def test_validate_reports_problems_with_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(BROKEN_OPENAI))
    code, out, _ = run("validate", str(path), "--provider", "openai", "--json")
    assert code == 1
    data = json.loads(out)
    assert data["valid"] is False
    assert any(p["index"] == 2 and "call_1" in p["detail"] for p in data["problems"])


def test_repair_then_validate(tmp_path: Path) -> None:
    src, dst = tmp_path / "broken.json", tmp_path / "fixed.json"
    src.write_text(json.dumps(BROKEN_OPENAI))
    code, _, err = run("repair", str(src), "--provider", "anthropic", "-o", str(dst))
    assert code == 0 and "repaired" in err
    fixed = json.loads(dst.read_text())
    assert [m["role"] for m in fixed] == ["system", "user", "assistant", "tool", "user"]
    code, _, _ = run("validate", str(dst), "--provider", "anthropic")
    assert code == 0


def test_convert_to_anthropic_with_id_template() -> None:
    code, out, _ = run("convert", EXAMPLE, "--to", "anthropic", "--tool-id-template", "toolu_{r:24:b}")
    assert code == 0
    doc = json.loads(out)
    assert doc["system"].startswith("You are a careful")
    ids = [
        b["id"]
        for m in doc["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_use"
    ]
    assert len(ids) == 10 and all(i.startswith("toolu_") and len(i) == 30 for i in ids)


def test_stdin_and_format_flag() -> None:
    code, out, _ = run(
        "validate", "-", "--provider", "openai", "--format", "openai", "--json", stdin=json.dumps(BROKEN_OPENAI[:2])
    )
    assert code == 0 and json.loads(out)["valid"] is True


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("", "empty input"),
        ("{not json", "invalid JSON"),
        ("[1, 2, 3]", "no known chat format"),
        ('{"messages": 5}', "error"),
        ('[{"role": "user", "content": 7}]', "content"),
        ("\xff\xfe", "error"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="latin-1")
    code, out, err = run("validate", str(path), "--provider", "openai")
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert out == ""


def test_missing_file_and_unknown_provider_and_format() -> None:
    assert run("inspect", "/nonexistent.json")[0] == 2
    code, _, err = run("validate", EXAMPLE, "--provider", "mistral")
    assert code == 2 and "unknown provider" in err
    code, _, err = run("inspect", EXAMPLE, "--format", "yaml")
    assert code == 2 and "unknown format" in err
    code, _, err = run("convert", EXAMPLE, "--to", "claude-code")
    assert code == 2 and "cannot write" in err


def test_bad_template_is_a_clear_error() -> None:
    code, _, err = run("convert", EXAMPLE, "--to", "anthropic", "--tool-id-template", "toolu_")
    assert code == 2 and "placeholder" in err


def test_console_script_runs() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "chainsum", "inspect", EXAMPLE, "--json"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["messages"] == 25


def test_deeply_nested_input_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = run("inspect", str(path))
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"{path}: input nested too deeply" in err
    code, _, err = run("validate", "-", "--provider", "openai", stdin="[" * 100_000)
    assert code == 2 and err.strip() == "chainsum: error: standard input: input nested too deeply to process"


def test_no_format_matches_names_the_closest_and_its_first_problem(tmp_path: Path) -> None:
    """Detection says what `--format openai` says, so a nearly right file tells its user what to fix."""
    path = tmp_path / "nearly.json"
    path.write_text(json.dumps([*BROKEN_OPENAI[:2], {"content": "no role"}]))
    code, _, detected = run("validate", str(path), "--provider", "openai")
    assert code == 2 and len(detected.strip().splitlines()) == 1
    _, _, forced = run("validate", str(path), "--provider", "openai", "--format", "openai")
    assert "no known chat format matches this document" in detected
    precise = forced.strip().removeprefix(f"chainsum: error: {path}: ")
    assert precise.startswith("openai: at [2].role: missing role (expected one of system, developer, user")
    assert f"closest: {precise}" in detected


def test_a_utf8_byte_order_mark_is_accepted_from_a_file_and_stdin(tmp_path: Path) -> None:
    text = json.dumps(BROKEN_OPENAI[:2])
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    code, out, err = run("validate", str(path), "--provider", "openai", "--json")
    assert code == 0 and json.loads(out)["valid"] is True, err
    result = runner.invoke(app, ["inspect", "-", "--json"], input=b"\xef\xbb\xbf" + text.encode())
    assert result.exit_code == 0 and json.loads(result.stdout)["messages"] == 2, result.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["compact", EXAMPLE, "--budget", "abc"], "--budget must be a whole number of tokens, got 'abc'"),
        (["compact", EXAMPLE, "--budget", "-1"], "--budget"),
        (["compact", EXAMPLE, "--strategy", "nope"], "unknown strategy 'nope'"),
        (["compact", EXAMPLE, "--bogus"], "compact: No such option: --bogus (see chainsum compact --help)"),
        (["replay", EXAMPLE, "--context-window", "abc"], "replay: Invalid value for '--context-window'"),
        (["search", "x", "--db", "a.db", "--limit", "many"], "search: Invalid value for '--limit'"),
        (["validate", EXAMPLE], "validate: Missing option '--provider'"),
        (["inspect"], "inspect: Missing argument 'FILE'"),
        (["nosuch"], "No such command 'nosuch'"),
    ],
)
def test_usage_errors_are_one_line_exit_2(args: list[str], needle: str) -> None:
    """Not click's usage block in a rich panel: one line, like every other error."""
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert err.startswith("chainsum: error: ") and needle in err
    assert len(err.strip().splitlines()) == 1
    assert not any(c in err for c in "╭│╰")


ANTHROPIC_DOC = {
    "system": "be brief",
    "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"},
                {"type": "text", "text": "and?"},
            ],
        },
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_2", "name": "g", "input": {}}]},
        {"role": "user", "content": "where is my result?"},
    ],
}


def test_anthropic_problems_count_messages_as_the_file_does(tmp_path: Path) -> None:
    """``system`` is a top-level field and a split user turn is one message there: the unanswered call is
    ``messages[3]`` in the file (canonical message 5)."""
    path = tmp_path / "anthropic.json"
    path.write_text(json.dumps(ANTHROPIC_DOC))
    code, out, _ = run("validate", str(path), "--provider", "anthropic", "--json")
    assert code == 1
    assert [(p["rule"], p["index"]) for p in json.loads(out)["problems"]] == [("tool-result-missing", 3)]
    code, out, _ = run("validate", str(path), "--provider", "anthropic")
    assert code == 1 and "tool-result-missing message 3: tool call g" in out
    code, _, err = run("repair", str(path), "--provider", "anthropic", "-o", str(tmp_path / "fixed.json"))
    assert code == 0 and "add-missing-results: message 3: added an error result for g" in err
    fixed = json.loads((tmp_path / "fixed.json").read_text())
    assert fixed["system"] == "be brief" and len(fixed["messages"]) == 5  # the result joins the last user turn
    assert fixed["messages"][4]["content"][0]["type"] == "tool_result"


def test_anthropic_load_errors_count_messages_as_the_file_does(tmp_path: Path) -> None:
    doc = {"system": "be brief", "messages": [{"role": "user", "content": "hi"}, {"role": "robot", "content": "x"}]}
    path = tmp_path / "anthropic.json"
    path.write_text(json.dumps(doc))
    code, _, err = run("validate", str(path), "--provider", "anthropic", "--format", "anthropic")
    assert code == 2 and "at messages[1].role" in err


def test_huge_conversation_round_trips_through_repair(tmp_path: Path) -> None:
    from chainsum.formats import dump
    from chainsum.testing import generate_large_chain

    messages = generate_large_chain(3000)
    src, dst = tmp_path / "big.json", tmp_path / "out.json"
    doc = dump(messages, to="openai")
    src.write_text(json.dumps(doc))
    assert src.stat().st_size > 3_000_000
    code, _, err = run("repair", str(src), "--provider", "openai", "-o", str(dst))
    assert code == 0, err
    assert json.loads(dst.read_text()) == doc  # already valid: unchanged
    code, out, _ = run("inspect", str(src), "--json")
    assert code == 0 and json.loads(out)["messages"] == len(messages)


def test_a_problem_on_a_top_level_system_prompt_is_named_so(tmp_path: Path) -> None:
    path = tmp_path / "anthropic.json"
    path.write_text(json.dumps({"system": [], "messages": [{"role": "user", "content": "hi"}]}))
    code, out, _ = run("validate", str(path), "--provider", "anthropic", "--json")
    assert code == 1 and [(p["rule"], p["index"]) for p in json.loads(out)["problems"]] == [("empty-content", None)]
    code, out, _ = run("validate", str(path), "--provider", "anthropic")
    assert code == 1 and out.startswith("empty-content the system prompt: system message has no content")
