"""Claude Code (``@anthropic-ai/claude-code``, pinned in package.json) through ``chainsum serve`` to the scripted
upstream, over Anthropic Messages with streaming.

Pointing it at the proxy takes ``ANTHROPIC_BASE_URL`` (the proxy's root: the client adds ``/v1/messages``) and any
``ANTHROPIC_API_KEY``. ``-p`` runs one task without a terminal; ``--allowedTools Bash`` lets it run the commands
without asking (``--dangerously-skip-permissions`` is refused as root). Offline it needs nothing more; the
environment turns off what would reach for the network anyway (telemetry, update checks, error reports).

Both its default model and Sonnet 4.6 are tested. The default model (Opus 5.5 in 2.1.332) puts mid-conversation
``role: "system"`` messages in ``messages``, which the proxy reads in place since 987d725 (it answered 400 before).

Measured with 2.1.332, by chainsum's count: Sonnet 4.6's first request is about 20,000 tokens (11,000 of tool
definitions, 6,200 of system prompt, 2,600 of first message) and asks for 32,000 tokens of answer; the default
model's is about 11,600 (7,500 / 1,700 / 2,400) and asks for 128,000 (the proxy reserves at most a quarter of the
window for the answer). A 60,000-token window leaves room for the conversation yet forces a compaction every few
steps. Near the end the upstream reports input tokens over Claude Code's own auto-compact threshold once (its
window for the model less its margins), so it compacts its history itself, and the proxy must take the restarted
conversation as it comes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e.agent_script import FINAL_ANSWER, Step
from e2e.conversation import ANTHROPIC, check_conversation
from e2e.fake_upstream import FakeUpstream, Persona
from e2e.harness import base_env, client, run_client, serve

pytestmark = pytest.mark.e2e

WINDOW = 60_000
TASK = "Run the scripted shell commands the model gives you, one per turn, then report what it says."
COMPACT_PROMPT = "create a detailed summary of the conversation"
"""A phrase of Claude Code's compaction request (its newest user text when it compacts itself)."""


def _bash(the_step: Step) -> dict[str, str]:
    return {"command": the_step.command, "description": f"Scripted step {the_step.number}"}


def _persona(model: str | None) -> Persona:
    """The agent for Claude Code. The usage that makes it compact itself depends on the window it knows for the
    model: 200,000 tokens for Sonnet 4.6, 1,000,000 for its default model (Opus 5.5 in 2.1.332)."""
    return Persona(
        route="messages",
        tool_name="Bash",
        arguments=_bash,
        id_prefix="toolu_",
        compact_prompt=COMPACT_PROMPT,
        high_usage_at=20,
        high_usage=990_000 if model is None else 195_000,
    )


@pytest.mark.parametrize(
    "model",
    [pytest.param(None, id="default-model"), pytest.param("claude-sonnet-4-6", id="sonnet")],
)
def test_claude_code_through_the_proxy(tmp_path: Path, model: str | None) -> None:
    claude = client("claude")
    with FakeUpstream(_persona(model)) as fake, serve(tmp_path, upstream=fake.base_url, context_window=WINDOW) as proxy:
        env = base_env(tmp_path / "home")
        env.update(
            ANTHROPIC_BASE_URL=proxy.base_url,
            ANTHROPIC_API_KEY="sk-ant-e2e",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
            DISABLE_AUTOUPDATER="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        )
        work = tmp_path / "work"
        work.mkdir()
        command = [claude, "-p", TASK, "--allowedTools", "Bash", *(["--model", model] if model else [])]
        run = run_client(command, cwd=work, env=env)
        assert run.returncode == 0, run.describe()
        assert FINAL_ANSWER in run.stdout, run.describe()
        fake.save(tmp_path / "received.json")
        stats = check_conversation(fake, proxy, ANTHROPIC, WINDOW)
    assert stats.client_compactions == 1, f"Claude Code did not compact its own history: {stats.line()}"
    print(f"claude {model or 'default model'}: {run.seconds:.1f} s, {stats.line()}")
