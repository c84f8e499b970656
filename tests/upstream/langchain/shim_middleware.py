"""`SummarizationMiddleware` for LangChain's tests: chainsum's `ChainsumMiddleware`, LangChain's arguments passed on
as they are.

What the subclass adds, and only that:

- a model name (``model=`` or ``summarizer=``) is resolved through ``langchain.agents.middleware.summarization``'s
  ``init_chat_model``, the name the tests patch (chainsum's adapter calls ``langchain.chat_models``' own);
- LangChain's private helpers that have a meaning in chainsum are named after chainsum's public behaviour:
  ``_create_summary`` / ``_acreate_summary`` are `ChainsumMiddleware.summarize_sync` / `summarize` (chainsum's
  summarizers on those messages, raising as a compaction would), ``_trigger_clauses`` is `trigger_clauses`,
  ``_get_profile_limits()`` the window chainsum took from the model's profile, ``_should_summarize`` is
  `trigger_fires` (whether the adapter's reading of LangChain's trigger is met); ``_summary_model`` (LangChain's
  retry wrapper, which the tests tune or bypass) is a holder whose settings chainsum ignores. The others
  (LangChain's cut search, its trimming) have no chainsum counterpart: the tests that call them are in
  `shim_known.KNOWN`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import langchain.agents.middleware.summarization as summarization
from langchain_core.messages import AnyMessage

from chainsum.integrations.langchain import ChainsumMiddleware


def _resolved(value: object) -> object:
    return summarization.init_chat_model(value) if isinstance(value, str) else value


class _RetrySettings:
    """Where LangChain's tests set (or replace) its retry wrapper's backoff to run fast: chainsum's retry is its own
    (one retry of a transient failure, none of an authentication or bad request), so what is set here changes
    nothing, and the assertions that follow (attempts made, the error raised) are about chainsum's."""


class SummarizationMiddleware(ChainsumMiddleware):
    def __init__(self, model: Any = None, **kwargs: Any) -> None:
        if "summarizer" in kwargs:
            kwargs["summarizer"] = _resolved(kwargs["summarizer"])
        super().__init__(_resolved(model), **kwargs)
        self._summary_model = _RetrySettings()

    def _should_summarize(self, messages: Sequence[AnyMessage], total_tokens: int) -> bool:
        return self.trigger_fires(messages, total_tokens)

    @property
    def _trigger_clauses(self) -> list[dict[str, float]]:
        return self.trigger_clauses

    def _get_profile_limits(self) -> int | None:
        return self.window

    def _create_summary(self, messages: Sequence[AnyMessage]) -> str:
        return self.summarize_sync(messages)

    async def _acreate_summary(self, messages: Sequence[AnyMessage]) -> str:
        return await self.summarize(messages)
