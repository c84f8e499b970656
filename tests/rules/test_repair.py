"""Each repair pass on small hand-written histories: what it changes, what it reports, and that it leaves
everything else (down to the very tuple) alone."""

from __future__ import annotations

import pytest

from chainsum.chain import FALLBACK_RESPONSE_CONTENT
from chainsum.messages import Image, Message, Opaque, Part, Reasoning, Text, ToolCall, ToolResult
from chainsum.rules import (
    CONTINUED_TEXT,
    EMPTY_ERROR_RESULT,
    PASSES,
    PROFILES,
    PROVIDERS,
    RepairAction,
    UnknownProviderError,
    repair,
    validate,
)


def user(text: str = "hi") -> Message:
    return Message.of("user", text)


def ai(*parts: Part | str) -> Message:
    return Message.of("assistant", *parts)


def calls(*ids: str, name: str = "f") -> Message:
    return Message(role="assistant", parts=tuple(ToolCall(id=i, name=name) for i in ids))


def tool(call_id: str, content: str = "ok", *, name: str | None = None, is_error: bool = False) -> Message:
    return Message(role="tool", parts=(ToolResult(call_id=call_id, name=name, content=content, is_error=is_error),))


def missing(call_id: str, name: str = "f") -> Message:
    return Message(
        role="tool",
        parts=(ToolResult(call_id=call_id, name=name, content=FALLBACK_RESPONSE_CONTENT, is_error=True),),
    )


VALID = (Message.of("system", "s"), user(), calls("c1", "c2"), tool("c1"), tool("c2"), ai("done"))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_valid_history_comes_back_as_the_same_object(provider: str) -> None:
    repaired = repair(VALID, provider)
    assert repaired.messages is VALID and repaired.actions == () and not repaired.changed


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_pass_returns_its_input_when_it_has_nothing_to_do(provider: str) -> None:
    for name, run in PASSES:
        out, actions = run(VALID, PROFILES[provider])
        assert out is VALID and actions == (), name


def test_every_pass_says_what_it_does_and_why_its_order_matters() -> None:
    for name, run in PASSES:
        assert run.__doc__ and f"``{name}``" in run.__doc__, name


def test_a_list_is_copied_into_a_tuple() -> None:
    assert repair(list(VALID), "openai").messages == VALID


def test_unknown_provider() -> None:
    with pytest.raises(UnknownProviderError):
        repair(VALID, "cohere")


def test_user_tool_calls_fold_into_text_with_their_results() -> None:
    call = ToolCall(id="u1", name="toggle_airplane_mode", arguments='{"on": true}')
    pic = Image(url="https://example.com/screen.png")
    result = ToolResult(call_id="u1", content=(Text(text="Airplane mode: ON"), pic))
    history = (
        user(),
        ai("toggle it"),
        Message(role="user", parts=(Text(text="ok"), call)),
        Message(role="tool", parts=(result,)),
        ai("thanks"),
    )
    repaired = repair(history, "openai")
    assert repaired.messages == (
        user(),
        ai("toggle it"),
        Message(
            role="user",
            parts=(
                Text(text="ok"),
                Text(text='[user ran tool toggle_airplane_mode({"on": true}) → result: Airplane mode: ON]'),
                pic,
            ),
        ),
        ai("thanks"),
    )
    assert repaired.actions == (
        RepairAction(
            "fold-misplaced-calls",
            2,
            "tool call toggle_airplane_mode (id 'u1') on the user message folded "
            "into text, with its result from message 3",
        ),
        RepairAction("fold-misplaced-calls", 3, "removed tool message 3: its results were folded into message 2"),
    )


def test_an_inline_system_message_is_not_folded_where_the_provider_takes_it() -> None:
    """A system message read from Anthropic's own list goes back there unchanged: the upstream decides."""
    inline = Message.of("system", "be brief", extras={"anthropic": {"inline": True}})
    history = (Message.of("system", "s"), user(), ai("x"), inline, user("y"), ai("z"))
    assert repair(history, "anthropic").messages is history
    assert repair(history, "bedrock").messages[3].role == "user"  # Bedrock has no such beta


def test_a_user_call_without_result_still_folds() -> None:
    history = (user(), ai("x"), Message(role="user", parts=(ToolCall(id="u1", name="reboot"),)), ai("y"))
    assert repair(history, "anthropic").messages[2] == Message.of(
        "user", "[user ran tool reboot({}) → no result recorded]"
    )


def test_mid_chain_system_becomes_marked_user_text_except_on_openai() -> None:
    history = (Message.of("system", "s"), user(), ai("x"), Message.of("system", "be brief"), user("y"), ai("z"))
    assert repair(history, "openai").messages is history
    repaired = repair(history, "anthropic")
    assert repaired.messages[3] == Message.of("user", "[system] be brief")
    assert [a.pass_name for a in repaired.actions] == ["fold-system-messages"]


def test_missing_results_are_added_after_the_existing_ones() -> None:
    history = (user(), calls("c1", "c2", "c3"), tool("c2"), user("next"))
    repaired = repair(history, "openai")
    assert repaired.messages == (
        user(),
        calls("c1", "c2", "c3"),
        tool("c2"),
        missing("c1"),
        missing("c3"),
        user("next"),
    )
    assert repaired.actions[0] == RepairAction(
        "add-missing-results", 1, "added an error result for f (id 'c1'), which had none"
    )


def test_orphans_are_dropped_and_reported_with_id_size_and_content() -> None:
    history = (user(), ai("x"), tool("c9", "some output", name="search"), user("y"), ai("z"))
    repaired = repair(history, "openai")
    assert repaired.messages == (user(), ai("x"), user("y"), ai("z"))
    assert repaired.actions == (
        RepairAction(
            "drop-orphan-results",
            2,
            "dropped the tool result for call id 'c9' (search), 11 bytes "
            "'some output': assistant message 1 before it makes no tool calls",
        ),
    )


def test_results_displaced_past_a_user_message_move_up() -> None:
    history = (user(), calls("c1", "c2"), tool("c1"), user("wait"), tool("c2", "late"), ai("x"))
    for provider in ("openai", "anthropic", "gemini"):
        repaired = repair(history, provider)
        assert repaired.messages == (user(), calls("c1", "c2"), tool("c1"), tool("c2", "late"), user("wait"), ai("x"))
        assert repaired.actions == (
            RepairAction(
                "gather-displaced-results",
                4,
                "moved the results for call ids 'c2' up to right after assistant message 1's tool results",
            ),
        )


def test_invalid_and_duplicate_ids_are_renamed_with_their_results() -> None:
    history = (user(), calls("call.1", "c1", "c1"), tool("c1", "a"), tool("call.1", "b"), tool("c1", "c"), ai("x"))
    repaired = repair(history, "anthropic")
    assert repaired.messages == (
        user(),
        calls("call_1", "c1", "c1_2"),
        tool("c1", "a"),
        tool("call_1", "b"),
        tool("c1_2", "c"),
        ai("x"),
    )
    assert [a.detail for a in repaired.actions] == [
        "renamed tool-call id 'call.1' of f to 'call_1', with its result",
        "renamed tool-call id 'c1' of f to 'c1_2', with its result",
    ]
    assert validate(repaired.messages, "anthropic") == []


def test_long_and_empty_ids() -> None:
    long_id = "a" * 45
    history = (user(), calls(long_id), tool(long_id), calls(""), tool("", name="f"), ai("x"))
    repaired = repair(history, "openai")
    assert repaired.messages == (
        user(),
        calls("a" * 40),
        tool("a" * 40),
        calls("call"),
        tool("call", name="f"),
        ai("x"),
    )
    assert repair(history, "gemini").messages is history  # Gemini takes both


def test_a_result_paired_by_name_takes_its_call_id() -> None:
    history = (user(), calls("c1"), tool("", name="f"), ai("x"))
    repaired = repair(history, "bedrock")
    assert repaired.messages == (user(), calls("c1"), tool("c1", name="f"), ai("x"))
    assert repaired.actions == (
        RepairAction("fix-tool-call-ids", 2, "gave the result answering f its call's id 'c1' (it had '')"),
    )


def test_bedrock_gives_tool_results_their_own_turn() -> None:
    history = (user(), calls("c1"), tool("c1"), user("by the way"), ai("x"))
    repaired = repair(history, "bedrock")
    assert repaired.messages == (user(), calls("c1"), tool("c1"), ai(CONTINUED_TEXT), user("by the way"), ai("x"))
    assert repaired.actions == (
        RepairAction(
            "separate-tool-results",
            3,
            "inserted an assistant message '(continued)' between the tool results before this user message and it",
        ),
    )
    assert repair(history, "anthropic").messages is history


def test_a_leading_assistant_gets_a_user_message_before_it() -> None:
    history = (Message.of("system", "s"), ai("hello"), user(), ai("x"))
    repaired = repair(history, "gemini")
    assert repaired.messages == (Message.of("system", "s"), user(CONTINUED_TEXT), ai("hello"), user(), ai("x"))
    assert repaired.actions == (
        RepairAction(
            "ensure-first-user", 1, "inserted a user message '(continued)' before the leading assistant message"
        ),
    )
    assert repair(history, "openai").messages is history


def test_consecutive_assistants_merge_where_turns_alternate() -> None:
    first = Message(role="assistant", parts=(Text(text="a"),), id="m1")
    second = Message(role="assistant", parts=(Text(text="b"),), id="m2")
    history = (user(), first, second)
    repaired = repair(history, "bedrock")
    assert repaired.messages == (user(), Message(role="assistant", parts=(Text(text="a"), Text(text="b")), id="m1"))
    assert repaired.actions == (
        RepairAction(
            "merge-assistant-runs", 2, "merged into assistant message 1 (its own id and provider extras were not kept)"
        ),
    )
    assert repair(history, "anthropic").messages is history


def test_blank_text_and_empty_messages_are_removed_where_rejected() -> None:
    history = (user(), ai(" ", ToolCall(id="c1", name="f")), tool("c1"), Message(role="assistant"), user("y"))
    repaired = repair(history, "anthropic")
    assert repaired.messages == (user(), calls("c1"), tool("c1"), user("y"))
    assert [a.detail for a in repaired.actions] == [
        "dropped blank text part 0 of the assistant message (1 characters)",
        "removed the empty assistant message",
    ]
    # OpenAI keeps the blank text (an empty or blank string is accepted), drops only the part-less message.
    assert [a.detail for a in repair(history, "openai").actions] == ["removed the empty assistant message"]


def test_an_empty_assistant_between_call_and_result_does_not_orphan_it() -> None:
    history = (user(), calls("c1"), Message(role="assistant"), tool("c1", "real"), ai("x"))
    assert repair(history, "openai").messages == (user(), calls("c1"), tool("c1", "real"), ai("x"))


def test_empty_error_results_get_text_on_bedrock() -> None:
    history = (user(), calls("c1"), tool("c1", "", is_error=True), ai("x"))
    repaired = repair(history, "bedrock")
    assert repaired.messages[2] == tool("c1", EMPTY_ERROR_RESULT, is_error=True)
    assert repair(history, "anthropic").messages is history


def test_foreign_opaque_blocks_are_dropped_and_named() -> None:
    block = Opaque(format="anthropic", data={"type": "server_tool_use", "id": "srvtoolu_1"})
    history = (user(), ai("x", block), user("y"), Message(role="assistant", parts=(block,)))
    repaired = repair(history, "gemini")
    assert repaired.messages == (user(), ai("x"), user("y"))
    assert [a.pass_name for a in repaired.actions] == ["drop-foreign-opaque"] * 3
    assert repaired.actions[0].detail.startswith(
        "dropped part 1 of the assistant message: anthropic 'server_tool_use' block ("
    )
    assert repair(history, "anthropic").messages is history


def test_unsigned_reasoning_is_dropped_where_a_signature_is_required() -> None:
    history = (user(), ai(Reasoning(text="let me think"), "x"))
    repaired = repair(history, "anthropic")
    assert repaired.messages == (user(), ai("x"))
    assert repaired.actions == (
        RepairAction(
            "drop-unsigned-reasoning",
            1,
            "dropped part 0 of the assistant message: reasoning without signature (12 characters: 'let me think')",
        ),
    )
    assert repair(history, "gemini").messages is history


def test_repair_is_idempotent_on_a_messy_history() -> None:
    history = (
        tool("x1"),
        ai("hello"),
        Message(role="user", parts=(ToolCall(id="u1", name="check"),)),
        tool("u1", "fine"),
        calls("bad id", "bad id"),
        Message.of("system", "mid"),
        ai(" "),
    )
    for provider in PROVIDERS:
        once = repair(history, provider)
        assert validate(once.messages, provider) == [], provider
        twice = repair(once.messages, provider)
        assert twice.messages is once.messages and twice.actions == (), provider


def test_placeholders_never_take_the_call_a_real_result_answers() -> None:
    # Found by Hypothesis: the real result pairs by name with the first call; placeholders put before it would
    # take that call by id (all three share it) and orphan the real result.
    assistant = Message(
        role="assistant",
        parts=(
            ToolCall(id="c1", name="get_weather"),
            ToolCall(id="c1", name="get_weather"),
            ToolCall(id="c1", name="search"),
        ),
    )
    history = (user(), assistant, user("0"), tool("", "sunny", name="get_weather"))
    for provider in PROVIDERS:
        repaired = repair(history, provider)
        assert validate(repaired.messages, provider) == [], provider
        assert not any(a.pass_name == "drop-orphan-results" for a in repaired.actions), provider
        assert any(r.content == "sunny" for m in repaired.messages for r in m.tool_results), provider


def test_non_result_parts_of_tool_messages_move_to_a_user_message_after_the_run() -> None:
    shot = Image(url="https://example.com/s.png")
    history = (
        user(),
        calls("c1", "c2"),
        Message(role="tool", parts=(ToolResult(call_id="c1", content="a"), Text(text="note"), shot)),
        tool("c2"),
        ai("x"),
    )
    repaired = repair(history, "openai")
    assert repaired.messages == (
        user(),
        calls("c1", "c2"),
        tool("c1", "a"),
        tool("c2"),
        Message(role="user", parts=(Text(text="note"), shot)),
        ai("x"),
    )
    assert repaired.actions == (
        RepairAction(
            "split-tool-messages",
            2,
            "moved the text, image parts of the tool message into a user message after its tool messages",
        ),
    )


def test_reasoning_on_a_tool_message_is_dropped_where_it_cannot_stand_alone() -> None:
    # Found by Hypothesis: moved into a user message of its own, reasoning alone is an empty message on OpenAI.
    history = (Message(role="tool", parts=(Reasoning(text="0"), ToolResult(call_id="c1", content="0"))),)
    for provider in PROVIDERS:
        repaired = repair(history, provider)
        assert validate(repaired.messages, provider) == [], provider
    assert repair(history, "openai").actions[0] == RepairAction(
        "split-tool-messages",
        0,
        "dropped the reasoning parts of the tool message: OpenAI Chat Completions cannot send them on their own",
    )


def test_only_runs_the_named_passes() -> None:
    history = [
        Message.of("user", "hi"),
        Message.of("assistant", "x"),
        Message.of("system", "mid"),
        Message.of("user", "q"),
    ]
    assert {a.pass_name for a in repair(history, "anthropic").actions} == {"fold-system-messages"}
    untouched = repair(history, "anthropic", only=("fold-misplaced-calls",))
    assert untouched.actions == () and list(untouched.messages) == history
    with pytest.raises(ValueError, match="no-such-pass"):
        repair(history, "anthropic", only=("no-such-pass",))
