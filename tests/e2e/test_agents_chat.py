"""A Chat Completions agent (the OpenAI Agents SDK, `agents_client.py`) through ``chainsum serve`` to the scripted
upstream, streamed chunks both ways.

Pointing it at the proxy: ``AsyncOpenAI(base_url="http://127.0.0.1:PORT/v1")`` given to
``OpenAIChatCompletionsModel``. Its first request is small (a short system prompt, one tool), so a 20,000-token
window forces a compaction every few steps. The Agents SDK has no compaction of its own.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from e2e.agent_script import FINAL_ANSWER, Step
from e2e.conversation import CHAT, check_conversation
from e2e.fake_upstream import FakeUpstream, Persona
from e2e.harness import HERE, base_env, run_client, serve

pytestmark = pytest.mark.e2e

WINDOW = 20_000
TASK = "Run the scripted shell commands the model gives you, one per turn, then report what it says."


def _run_shell(the_step: Step) -> dict[str, str]:
    return {"command": the_step.command}


PERSONA = Persona(route="chat", tool_name="run_shell", arguments=_run_shell, id_prefix="call_", reasoning=False)


def test_agents_sdk_chat_completions_through_the_proxy(tmp_path: Path) -> None:
    with FakeUpstream(PERSONA) as fake, serve(tmp_path, upstream=fake.base_url, context_window=WINDOW) as proxy:
        env = base_env(tmp_path / "home")
        env["OPENAI_AGENTS_DISABLE_TRACING"] = "1"
        command = [sys.executable, str(HERE / "agents_client.py"), f"{proxy.base_url}/v1", TASK]
        run = run_client(command, cwd=tmp_path, env=env)
        assert run.returncode == 0, run.describe()
        assert FINAL_ANSWER in run.stdout, run.describe()
        fake.save(tmp_path / "received.json")
        stats = check_conversation(fake, proxy, CHAT, WINDOW)
    print(f"agents sdk: {run.seconds:.1f} s, {stats.line()}")
