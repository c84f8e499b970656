"""The shim's entry point: `shim_openai_agents` (see its docstring). `run_suite` copies this file to the run's
``tests/conftest.py``, beside the shim's modules; there it loads the shim. Here, in chainsum's own tree, pytest
loads it as a conftest of chainsum's suite too, where it must change nothing: no framework class replaced."""

from pathlib import Path

if Path(__file__).resolve().parent.name == "tests":  # the run's copy, <work>/tests/conftest.py
    from .shim_openai_agents import *  # noqa: F403  # its fixtures and hooks, which pytest finds here
else:
    collect_ignore: list[str] = []
