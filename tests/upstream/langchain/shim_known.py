"""LangChain 1.5.2's ``test_summarization.py`` tests that fail against chainsum for a reason of the algorithm, not of
the contract, each with why (the shim marks them ``xfail(strict=True)``). The contract they touch is checked at
realistic sizes in ``tests/integrations/test_langchain_drop_in.py``."""

from __future__ import annotations

_FILE = "tests/unit_tests/agents/middleware/implementations/test_summarization.py"

_TINY = (
    "its messages are 1-3 words: no chainsum summary record (its frame alone is ~75 tokens) is smaller than what it "
    "would replace, so chainsum keeps them verbatim (DESIGN invariant 5) and "
)
_CUT = "asserts LangChain's cut-point search (a private with no chainsum counterpart: chainsum cuts by its chain tree)"
_TRIM = "asserts LangChain's trimming of the summarizer input (private): chainsum chunks a long span instead"
_LEGACY = "asserts `_trigger_conditions`, LangChain's legacy private view (its own comment: remove in 2.0)"

_KNOWN: dict[str, str] = {
    "test_summarization_middleware_helper_methods": (
        "asserts LangChain's privates _ensure_message_ids/_partition_messages/_build_new_messages (its summary "
        "message text): chainsum writes its own record"
    ),
    "test_summarization_middleware_summary_creation": (
        "passes up to `_create_summary([])`, where it asserts LangChain's placeholder text for an empty span"
    ),
    "test_summarizer_empty_history_skips_summarizer": "asserts LangChain's placeholder text for an empty span",
    "test_summarization_middleware_retries_transient_failure_in_call": (
        "LangChain retries a failing summary call 3 times; chainsum retries a transient failure once"
    ),
    "test_create_summary_recovers_from_context_overflow": (
        "LangChain retries an overflowing summary prompt with its middle cut out; chainsum caps and chunks the "
        "summarizer input up front (here uncapped: trim_tokens_to_summarize=None)"
    ),
    "test_acreate_summary_recovers_from_context_overflow": (
        "LangChain retries an overflowing summary prompt with its middle cut out; chainsum caps and chunks up front"
    ),
    "test_create_summary_raises_on_persistent_context_overflow": (
        "raises as asserted, but counts LangChain's middle-cut retry (2 prompts); chainsum does not resend an "
        "overflowing prompt"
    ),
    "test_chat_model_summarizer_overflow_budget_uses_summarizer_profile": (
        "asserts the size of LangChain's middle-cut retry prompt; chainsum caps and chunks up front"
    ),
    "test_summarization_middleware_before_model_raises_on_summary_failure": _TINY
    + "the failing model is never called, so nothing raises",
    "test_summarization_middleware_abefore_model_raises_on_summary_failure": _TINY
    + "the failing model is never called, so nothing raises",
    "test_summarization_middleware_e2e_failure_raises_without_corrupting_history": _TINY
    + "the failing model is never called, so nothing raises",
    "test_summarizer_errors_propagate": _TINY + "the failing summarizer is never called, so nothing raises",
    "test_summarizer_replaces_model_call": _TINY + "no summary is written",
    "test_summarizer_async": _TINY + "no summary is written",
    "test_summary_call_stays_off_the_messages_stream": _TINY + "no summary message reaches the state's stream",
    "test_summarization_middleware_profile_inference_triggers_summary": _TINY
    + "no summary is written (and the exact messages kept are LangChain's cut)",
    "test_and_trigger_conditions": _TINY + "no summary is written once the trigger is met",
    "test_or_trigger_conditions_with_and_clauses": _TINY + "no summary is written once the trigger is met",
    "test_summarization_middleware_full_workflow": _TINY + "no summary is written",
    "test_summarization_middleware_full_workflow_async": (
        "asserts LangChain's exact output (summary + the last 2 of 5 one-character messages); chainsum cannot "
        "summarize them smaller, and under the test's counter (1500 tokens for any list) joining them is the gain"
    ),
    "test_summarization_middleware_keep_messages": (
        "asserts LangChain's exact output (summary + the last 2 of 5 one-character messages); chainsum cannot "
        "summarize them smaller"
    ),
    "test_or_trigger_conditions_with_and_clauses_async": (
        "calls the hook twice on the very same history: chainsum's session remembers its compaction of that "
        "history (the archive's view) and answers it again after the trigger is no longer met"
    ),
    "test_summarization_middleware_token_retention_preserves_ai_tool_pairs": (
        "asserts the exact messages LangChain's token-based cut keeps (chainsum keeps the AI/tool pair together "
        "too, at its own cut)"
    ),
    "test_summarization_middleware_trim_limit_none_keeps_all_messages": _TRIM,
    "test_summarization_middleware_trim_messages_error_fallback": _TRIM,
    "test_summarizer_receives_trimmed_messages": _TRIM,
    "test_summarization_middleware_binary_search_edge_cases": _CUT,
    "test_summarization_middleware_find_safe_cutoff_point": _CUT,
    "test_summarization_middleware_find_safe_cutoff_point_orphan_tool": _CUT,
    "test_summarization_cutoff_moves_backward_to_include_ai_message": _CUT,
    "test_summarization_middleware_cutoff_at_boundary": _CUT,
    "test_summarization_middleware_many_parallel_tool_calls_safety": _CUT,
    "test_summarization_middleware_find_safe_cutoff_preserves_ai_tool_pair": _CUT,
    "test_summarization_middleware_cutoff_at_start_of_tool_sequence": _CUT,
    "test_trigger_conditions_legacy_tuple_view_remove_in_2_0": _LEGACY,
    "test_compound_trigger_has_no_legacy_tuple_projection": _LEGACY,
    "test_empty_list_trigger_never_summarizes": _LEGACY,
    "test_summarization_adjust_token_counts": (
        "asserts LangChain's approximate counter tuned to the model type (3.3 characters a token for Anthropic); "
        "chainsum's own counter calibrates from provider usage instead"
    ),
    "test_summarization_before_model_uses_unscaled_tokens_for_cutoff": (
        "asserts the keyword arguments LangChain passes its approximate counter (usage-metadata scaling on and off)"
    ),
    "test_create_summary_preserves_image_urls[sync]": (
        "asserts the summary model gets one string prompt; chainsum sends a system and a human message (the URL is "
        "in the transcript)"
    ),
    "test_create_summary_preserves_image_urls[async]": (
        "asserts the summary model gets one string prompt; chainsum sends a system and a human message (the URL is "
        "in the transcript)"
    ),
    "test_usage_metadata_trigger": (
        "cannot run here: it builds ChatAnthropic, and langchain-anthropic is no dependency of chainsum (LangChain's "
        "conftest skips it then; its reported-token rule runs in the aliased-provider tests)"
    ),
}

KNOWN: dict[str, str] = {f"{_FILE}::{name}": why for name, why in _KNOWN.items()}
"""Node id -> why the test is algorithm-specific."""
