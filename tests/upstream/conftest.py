"""The shim folders (``tests/upstream/<framework>/``) are sources that `upstream_support.run_suite` copies into a
framework's test tree: not tests of chainsum's, and their ``conftest.py`` must not load into chainsum's own run
(each replaces a framework class for the process). pytest does not collect them here."""

collect_ignore = ["langchain", "strands", "pydantic_ai", "openai_agents"]
