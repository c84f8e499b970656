"""Strands' tests that chainsum fails for a reason of its algorithm, not of the contract: node id -> why.

Four kinds. The upstream histories are a few words a message: a chainsum summary record (framed, with its
provenance) is larger than they are, and chainsum never writes a history larger than the one it was given
(DESIGN invariant 5), so where a test counts the messages Strands' 50 % cut leaves, chainsum keeps them all (or
raises the overflow saying there is nothing to compact). Strands' summarization-agent path runs a test double as an
agent; chainsum refuses anything that is not a Strands ``Agent`` at once (issue 33), and calls only the agent's
model. Two tests run the hooks synchronously, which chainsum's async hook does not allow. And Strands' private
split-point helper has no chainsum counterpart (chainsum's cut is its chain builder's). The contract these tests
stand for is checked at realistic sizes in ``tests/integrations/test_strands_dropin.py``.
"""

_FILE = "tests/strands/agent/test_summarizing_conversation_manager.py::"
_IDS = "tests/strands/test_tracking_id_history_invariant.py::"

_TINY = (
    "a summary of these few-word messages would be larger than they are: chainsum keeps them (invariant 5) "
    "instead of cutting Strands' share"
)
_DOUBLE = (
    "passes a test double as summarization_agent: chainsum refuses any non-Agent at once (issue 33) and only ever "
    "calls a real agent's model, so Strands' agent-run path (its prompt, tool registry and state swaps) has no "
    "counterpart"
)
_SPLIT = "Strands' private split-point helper and its messages: chainsum's safe cut is its chain builder's"

KNOWN: dict[str, str] = {
    _FILE + "test_reduce_context_with_summarization": _TINY + " (asserts 4 of 6 messages left)",
    _FILE + "test_reduce_context_summary_message_has_durable_id": _TINY
    + " (so no summary to carry the id: test_strands_dropin checks it at realistic sizes)",
    _FILE + "test_reduce_context_raises_on_summarization_failure": _TINY
    + ", so the model is not called and the overflow is raised instead of the model's error; it also patches "
    "Strands' module logger",
    _FILE + "test_reduce_context_tool_pair_adjustment_works_with_forward_search": _TINY + " (asserts 2 of 3 left)",
    _FILE + "test_summarizing_conversation_manager_properly_records_removed_message_count": _TINY
    + " (asserts Strands' exact counts after two cuts)",
    _FILE + "test_proactive_compression_summarizes_when_exceeded": "Strands' trigger reads projected_input_tokens "
    "(800 of 1000); chainsum counts the 20 few-word messages itself (far under 70 %) and keeps them",
    **{
        _FILE + name: "runs the hooks with the synchronous invoke_callbacks, which refuses an async callback; "
        "chainsum's hook is async (Strands' agent awaits it) so that a compaction waiting on its model does not "
        "block the agent's event loop"
        for name in ("test_proactive_compression_no_summarize_when_below", "test_proactive_compression_swallows_errors")
    },
    _FILE + "test_default_path_passes_correct_system_prompt": "asserts Strands' summarization prompt; chainsum's "
    "model summarizer sends its own (the transcript framed as data, never instructions)",
    _IDS + "test_no_idless_messages_after_summarization": _TINY
    + ": the simulated overflow of an 81-token history is raised with why, not summarized",
    _IDS + "test_no_idless_messages_after_combined_multi_turn_flow": _TINY
    + ": the simulated overflow of a 107-token history is raised with why, not summarized",
    **{
        _FILE + name: _DOUBLE
        for name in (
            "test_summarization_agent_reasoning_blocks_are_dropped_from_summary",
            "test_init_with_custom_parameters",
            "test_uses_summarization_agent_when_provided",
            "test_agent_path_state_restoration_with_summarization_agent",
            "test_agent_path_state_restoration_on_exception",
            "test_summarizing_conversation_manager_generate_summary_with_noop_tool_agent_path",
            "test_summarizing_conversation_manager_generate_summary_with_tools_agent_path",
            "test_generate_summary_disables_structured_output_on_summarization_agent",
        )
    },
    **{
        _FILE + name: _SPLIT
        for name in (
            "test_adjust_split_point_for_tool_pairs",
            "test_adjust_split_point_exceeds_message_length",
            "test_adjust_split_point_equals_message_length",
            "test_adjust_split_point_no_tool_result_at_split",
            "test_adjust_split_point_tool_result_without_tool_use",
            "test_adjust_split_point_tool_result_moves_to_end",
            "test_adjust_split_point_tool_result_no_forward_position",
        )
    },
}
