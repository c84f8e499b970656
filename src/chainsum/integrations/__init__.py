"""Agent-framework integrations, one module per framework, each importing its framework lazily.

- `chainsum.integrations.langchain` (``pip install "chainsum[langchain]"``): `ChainsumMiddleware` for LangChain v1's
  `create_agent(middleware=[...])`.
- `chainsum.integrations.pydantic_ai` (``pip install "chainsum[pydantic-ai]"``): `ChainsumHistory`, a history
  processor for pydantic-ai v2's ``capabilities=[ProcessHistory(...)]`` (placed straight in ``capabilities=`` it
  makes a `ChainsumCapability`).
- `chainsum.integrations.strands` (``pip install "chainsum[strands]"``): `ChainsumConversationManager`.
- `chainsum.integrations.openai_agents` (``pip install "chainsum[openai-agents]"``): `ChainsumSession`, a `Session`
  wrapping any session of the OpenAI Agents SDK, and `ChainsumInputFilter` (``RunConfig(call_model_input_filter=)``)
  for a saved session left untouched.

Importing this package imports no framework; importing a module whose framework is missing raises
`chainsum.errors.MissingDependencyError` with the install command.
"""
