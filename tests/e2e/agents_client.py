"""A Chat Completions agent for the end-to-end suite, run as its own process like the other clients: the OpenAI
Agents SDK's `Runner` (streamed) with `OpenAIChatCompletionsModel` over an `AsyncOpenAI` client whose base URL is
the proxy, and one real function tool that runs a shell command and returns its output.

    python tests/e2e/agents_client.py BASE_URL TASK

Prints the agent's final output; exits 0 when the run finished. Tracing is off (it would export to OpenAI).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys

from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
from openai import AsyncOpenAI


@function_tool
def run_shell(command: str) -> str:
    """Run a shell command and return what it printed (stdout, then stderr)."""
    done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=60, check=False)
    return done.stdout + done.stderr


async def main(base_url: str, task: str) -> int:
    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=base_url, api_key="sk-e2e", max_retries=0)
    agent = Agent(
        name="e2e",
        instructions="Run the commands the task needs with run_shell, one per turn, then answer.",
        tools=[run_shell],
        model=OpenAIChatCompletionsModel(model="gpt-e2e", openai_client=client),
        model_settings=ModelSettings(include_usage=True, max_tokens=4_000),
    )
    result = Runner.run_streamed(agent, task, max_turns=60)
    async for _ in result.stream_events():
        pass
    print(result.final_output)
    await client.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2])))
