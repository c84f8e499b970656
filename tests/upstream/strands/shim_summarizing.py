"""chainsum's `ChainsumConversationManager` under the name of the class it replaces, for Strands' own tests.

It adds no behaviour: the constructor is chainsum's, which takes ``SummarizingConversationManager``'s arguments
itself. What it adds are the two privates of Strands' manager that its tests read, each mapped onto what chainsum
really does:

- ``_summary_message``: Strands keeps its one summary message in its session state and hands it back on restore.
  chainsum keeps the messages it wrote at the head of the history (its *prefix*, whose summary record is
  `ChainsumConversationManager.summary_message`) in its state and hands those back: reading gives chainsum's newest
  summary record, setting it makes that message the prefix a restore returns.
- ``_generate_summary(messages, agent)``: the summary chainsum's summarizer writes for `messages` (its framed
  transcript, chainsum's `render_transcript`), with `agent` served (so by default the agent's own model writes it,
  as in chainsum's compactions), as the user message Strands' method answers with.

Strands' split-point helper (``_adjust_split_point_for_tool_pairs``) has no counterpart: chainsum's cut is its
chain builder's, so its tests are in ``KNOWN``.
"""

from __future__ import annotations

import inspect
from typing import Any

from chainsum._sync import run_sync
from chainsum.formats import bedrock
from chainsum.integrations.strands import ChainsumConversationManager
from chainsum.summarize import render_transcript


class SummarizingConversationManager(ChainsumConversationManager):
    @property
    def _summary_message(self) -> Any:
        return self.summary_message

    @_summary_message.setter
    def _summary_message(self, message: Any) -> None:
        self._prefix = [message] if message else []
        self._summary = message

    def _generate_summary(self, messages: list[Any], agent: Any) -> Any:
        summarizer = self.manager.summarizers[0]
        transcript = render_transcript(bedrock.load(list(messages)).messages)

        async def summarize() -> str:
            with self._serving(agent):
                text = summarizer(transcript)
                return await text if inspect.isawaitable(text) else text

        return {"role": "user", "content": [{"text": run_sync(summarize)}]}
