"""Each rule on small hand-written histories, with the exact `Problem` expected per provider."""

from __future__ import annotations

import pytest

from chainsum.errors import ChainsumError
from chainsum.messages import Image, Message, Opaque, Part, Reasoning, Text, ToolCall, ToolResult
from chainsum.rules import PROVIDERS, RULES, Problem, UnknownProviderError, validate


def user(text: str = "hi") -> Message:
    return Message.of("user", text)


def ai(*parts: Part | str) -> Message:
    return Message.of("assistant", *parts)


def calls(*ids: str, name: str = "f") -> Message:
    return Message(role="assistant", parts=tuple(ToolCall(id=i, name=name) for i in ids))


def tool(call_id: str, content: str = "ok", *, name: str | None = None, is_error: bool = False) -> Message:
    return Message(role="tool", parts=(ToolResult(call_id=call_id, name=name, content=content, is_error=is_error),))


def for_all(messages: list[Message]) -> dict[str, list[Problem]]:
    return {p: validate(messages, p) for p in PROVIDERS}


def test_unknown_provider_is_a_value_error_naming_the_known_ones() -> None:
    with pytest.raises(UnknownProviderError) as info:
        validate([user()], "mistral")
    assert isinstance(info.value, ValueError) and isinstance(info.value, ChainsumError)
    assert str(info.value) == "unknown provider 'mistral'; known providers: openai, anthropic, gemini, bedrock"


def test_a_plain_tool_conversation_is_valid_everywhere() -> None:
    history = [Message.of("system", "be kind"), user(), calls("c1", "c2"), tool("c2"), tool("c1"), ai("done")]
    assert for_all(history) == {p: [] for p in PROVIDERS}


def test_ids_reused_in_later_turns_pair_by_position() -> None:
    # tau-bench reuses ids for different calls; each call is answered right after it.
    history = [user(), calls("c1"), tool("c1", "a"), calls("c1"), tool("c1", "b"), ai("done")]
    assert for_all(history) == {p: [] for p in PROVIDERS}


def test_missing_result() -> None:
    history = [user(), calls("c1", "c2"), tool("c1"), ai("x")]
    expected = Problem(
        "tool-result-missing", 1, "tool call f (id 'c2') has no result in the tool messages right after it"
    )
    assert for_all(history) == {p: [expected] for p in PROVIDERS}


def test_pending_calls_at_the_end_count_as_missing() -> None:
    assert validate([user(), calls("c1")], "anthropic") == [
        Problem("tool-result-missing", 1, "tool call f (id 'c1') has no result in the tool messages right after it")
    ]


def test_orphan_results() -> None:
    assert validate([user(), ai("x"), tool("c9")], "openai") == [
        Problem(
            "orphan-tool-result",
            2,
            "tool result for call id 'c9' answers nothing: assistant message 1 before it makes no tool calls",
        )
    ]
    assert validate([tool("c1", name="f"), user()], "openai") == [
        Problem(
            "orphan-tool-result",
            0,
            "tool result for call id 'c1' (f) answers nothing: no assistant message "
            "with tool calls comes right before it",
        )
    ]
    # answered twice: the second one answers nothing
    assert validate([user(), calls("c1"), tool("c1"), tool("c1"), ai("x")], "gemini") == [
        Problem(
            "orphan-tool-result",
            3,
            "tool result for call id 'c1' answers nothing: it answers none of the calls of assistant message 1",
        )
    ]


def test_a_result_on_a_user_message_is_an_orphan() -> None:
    stray = Message(role="user", parts=(Text(text="see"), ToolResult(call_id="c1", content="x")))
    assert validate([user(), calls("c1"), tool("c1"), stray], "anthropic") == [
        Problem(
            "orphan-tool-result",
            3,
            "tool result for call id 'c1' answers nothing: it sits on a user message, not a tool message",
        )
    ]


def test_results_after_user_text_are_displaced_for_every_provider() -> None:
    # Anthropic's writer would merge the user text and the result into one turn, results first; chainsum still
    # wants the results directly after the calls (DESIGN invariant 1, and the chain tree's body pairs).
    history = [user(), calls("c1"), user("wait"), tool("c1"), ai("x")]
    expected = [
        Problem("tool-result-missing", 1, "tool call f (id 'c1') has no result in the tool messages right after it"),
        Problem(
            "orphan-tool-result",
            3,
            "tool result for call id 'c1' answers nothing: no assistant message with tool calls comes right before it",
        ),
    ]
    problems = for_all(history)
    assert problems["openai"] == problems["anthropic"] == problems["gemini"] == expected
    assert [p.rule for p in problems["bedrock"]] == ["tool-result-missing", "tool-results-mixed", "orphan-tool-result"]


def test_results_then_user_text_in_one_bedrock_turn() -> None:
    history = [user(), calls("c1"), tool("c1"), user("and also")]
    assert validate(history, "bedrock") == [
        Problem(
            "tool-results-mixed",
            3,
            "the user turn of messages 2-3 holds tool results and other content; "
            "Amazon Bedrock Converse takes tool results alone in their turn",
        )
    ]
    assert validate(history, "anthropic") == []


def test_duplicate_ids_within_one_message() -> None:
    history = [user(), calls("c1", "c1"), tool("c1"), tool("c1"), ai("x")]
    expected = Problem(
        "duplicate-tool-call-id", 1, "tool call f reuses the id 'c1' of an earlier call in the same message"
    )
    assert for_all(history) == {p: [expected] for p in PROVIDERS}


def test_id_charset() -> None:
    history = [user(), calls("call.1"), tool("call.1"), ai("x")]
    problems = for_all(history)
    assert (
        problems["anthropic"]
        == problems["bedrock"]
        == [Problem("tool-call-id-charset", 1, "tool-call id 'call.1' of f has characters outside [a-zA-Z0-9_-]+")]
    )
    assert problems["openai"] == problems["gemini"] == []


def test_id_length() -> None:
    long_id = "x" * 41
    history = [user(), calls(long_id), tool(long_id), ai("x")]
    assert validate(history, "openai") == [
        Problem(
            "tool-call-id-length",
            1,
            f"tool-call id {long_id!r} of f has 41 characters; OpenAI Chat Completions takes 1 to 40",
        )
    ]
    assert validate(history, "bedrock") == validate(history, "anthropic") == []
    longer = "y" * 70
    assert validate([user(), calls(longer), tool(longer), ai("x")], "bedrock") == [
        Problem(
            "tool-call-id-length",
            1,
            f"tool-call id {longer!r} of f has 70 characters; Amazon Bedrock Converse takes 1 to 64",
        )
    ]


def test_empty_ids_pair_by_name_and_only_gemini_takes_them() -> None:
    history = [user(), calls("", name="f"), tool("", name="f"), ai("x")]
    assert validate(history, "gemini") == []
    assert validate(history, "anthropic") == [
        Problem("tool-call-id-length", 1, "tool-call id '' of f has 0 characters; Anthropic Messages takes at least 1")
    ]


def test_result_paired_by_name_must_carry_the_call_id_where_ids_are_required() -> None:
    history = [user(), calls("c1"), tool("", name="f"), ai("x")]
    expected = [Problem("tool-result-id-mismatch", 2, "the result answering f (id 'c1') carries id ''")]
    assert validate(history, "openai") == validate(history, "bedrock") == expected
    assert validate(history, "gemini") == []


def test_first_message_role() -> None:
    history = [Message.of("system", "s"), ai("hello"), user(), ai("x")]
    problems = for_all(history)
    assert problems["openai"] == []
    assert problems["anthropic"] == [
        Problem(
            "first-message-role",
            1,
            "the first non-system message is an assistant message; Anthropic Messages requires a user message first",
        )
    ]
    assert [p.rule for p in problems["gemini"]] == ["first-message-role"]
    assert [p.rule for p in problems["bedrock"]] == ["first-message-role"]
    assert validate([Message.of("system", "s")], "anthropic") == []  # nothing to send yet is not a problem here


def test_system_placement() -> None:
    history = [Message.of("system", "s"), user(), ai("x"), Message.of("system", "be brief"), user()]
    assert validate(history, "openai") == []
    assert validate(history, "gemini") == [
        Problem(
            "system-placement",
            3,
            "system message in the middle of the conversation (after message 1); Gemini "
            "generateContent only takes system text at the start",
        )
    ]


def test_a_system_message_the_client_sent_inside_anthropics_list_is_no_placement_problem() -> None:
    """Anthropic's ``mid-conversation-system`` beta: a system message read from inside ``messages`` (marked inline)
    is the client's and the upstream's call; one from elsewhere is still a problem, and so it is on Gemini."""
    inline = Message.of("system", "plan mode", extras={"anthropic": {"inline": True}})
    history = [Message.of("system", "s"), user(), ai("x"), inline, user()]
    assert validate(history, "anthropic") == []
    assert [p.rule for p in validate(history, "gemini")] == ["system-placement"]
    foreign = [*history[:3], Message.of("system", "plan mode"), user()]
    assert [(p.rule, p.index) for p in validate(foreign, "anthropic")] == [("system-placement", 3)]


def test_alternation() -> None:
    history = [user(), ai("a"), ai("b")]
    expected = "assistant message follows assistant message 1; Amazon Bedrock Converse requires user and assistant "
    assert validate(history, "bedrock") == [Problem("alternation", 2, expected + "turns to alternate")]
    assert [p.rule for p in validate(history, "gemini")] == ["alternation"]
    assert validate(history, "anthropic") == validate(history, "openai") == []
    # consecutive user and tool messages merge into one wire turn: fine everywhere
    assert validate([user(), user("more"), ai("x")], "bedrock") == []


def test_empty_content() -> None:
    nothing = [user(), Message(role="assistant")]
    assert for_all(nothing) == {
        p: [Problem("empty-content", 1, f"assistant message has no content {title} accepts (parts: none)")]
        for p, title in zip(
            PROVIDERS,
            ["OpenAI Chat Completions", "Anthropic Messages", "Gemini generateContent", "Amazon Bedrock Converse"],
            strict=True,
        )
    }
    blank = [user(), ai(Text(text=" \n"), ToolCall(id="c1", name="f")), tool("c1")]
    problems = for_all(blank)
    assert (
        problems["anthropic"]
        == problems["bedrock"]
        == [Problem("empty-content", 1, "text part 0 of the assistant message is blank")]
    )
    assert problems["openai"] == problems["gemini"] == []
    assert validate([user(), ai("", ToolCall(id="c1", name="f")), tool("c1")], "gemini") == [
        Problem("empty-content", 1, "text part 0 of the assistant message is blank")
    ]
    assert validate([user(), ai("")], "openai") == []  # OpenAI takes an empty string


def test_reasoning_alone_is_empty_where_the_wire_has_no_field_for_it() -> None:
    history = [user(), Message(role="assistant", parts=(Reasoning(text="hmm", signature="s"),))]
    assert validate(history, "openai") == [
        Problem(
            "empty-content", 1, "assistant message has no content OpenAI Chat Completions accepts (parts: reasoning)"
        )
    ]
    assert validate(history, "anthropic") == []


def test_empty_tool_results() -> None:
    error = [user(), calls("c1"), tool("c1", "", is_error=True), ai("x")]
    assert validate(error, "bedrock") == [
        Problem("empty-content", 2, "the error tool result for call id 'c1' has no content")
    ]
    assert validate(error, "anthropic") == validate(error, "openai") == []
    blank_block = Message(role="tool", parts=(ToolResult(call_id="c1", content=(Text(text=" "), Image(url="u"))),))
    assert validate([user(), calls("c1"), blank_block, ai("x")], "anthropic") == [
        Problem("empty-content", 2, "the tool result for call id 'c1' holds a blank text block")
    ]


def test_user_tool_calls() -> None:
    # tau2-bench: the simulated user toggles airplane mode; its result follows as a tool message.
    call = ToolCall(id="u1", name="toggle_airplane_mode", arguments='{"on": true}')
    history = [user(), ai("please toggle it"), Message(role="user", parts=(call,)), tool("u1", "done"), ai("x")]
    for p in PROVIDERS:
        problems = validate(history, p)
        assert problems[0] == Problem(
            "user-tool-calls",
            2,
            f"user message makes tool calls toggle_airplane_mode (id 'u1'); {problems[0].detail.split('; ')[1]}",
        )
        mixed = ["tool-results-mixed"] if p == "bedrock" else []  # the user's call and the tool result share a turn
        assert [q.rule for q in problems] == ["user-tool-calls", *mixed, "orphan-tool-result"]


def test_tool_call_on_a_system_message() -> None:
    history = [Message(role="system", parts=(ToolCall(id="s1", name="f"),)), user(), ai("x")]
    assert [p.rule for p in validate(history, "openai")] == ["misplaced-tool-call"]


def test_foreign_opaque() -> None:
    block = Opaque(format="anthropic", data={"type": "server_tool_use", "id": "srvtoolu_1"})
    history = [user(), ai("x", block)]
    assert validate(history, "anthropic") == []
    assert validate(history, "openai") == [
        Problem(
            "foreign-opaque",
            1,
            "part 1 is an anthropic 'server_tool_use' block that OpenAI Chat Completions cannot read",
        )
    ]


def test_openais_responses_items_are_not_foreign_to_openai() -> None:
    """OpenAI serves the Responses format too: a web search call item read from it goes back there (the proxy's
    ``/v1/responses`` route compacts with OpenAI's rules, and dropped such items from the turns it kept)."""
    item = Opaque(format="openai-responses", data={"type": "web_search_call", "id": "ws_1", "status": "completed"})
    assert validate([user(), ai(item, "x")], "openai") == []
    assert [p.rule for p in validate([user(), ai(item, "x")], "anthropic")] == ["foreign-opaque"]


def test_reasoning_signature() -> None:
    history = [user(), ai(Reasoning(text="hmm"), "x"), user("y"), ai(Reasoning(data="ZW5j"), "z")]
    expected = [
        Problem(
            "reasoning-signature",
            1,
            "reasoning part 0 (3 characters) has neither a signature nor redacted data; Anthropic Messages rejects it",
        )
    ]
    assert validate(history, "anthropic") == expected
    assert [p.rule for p in validate(history, "bedrock")] == ["reasoning-signature"]
    assert validate(history, "openai") == validate(history, "gemini") == []


def test_problems_are_ordered_by_message_and_print_with_their_place() -> None:
    history = [ai("a"), ai(""), Message.of("system", "s")]
    problems = validate(history, "bedrock")
    assert [p.index for p in problems] == sorted(p.index for p in problems)
    assert str(problems[0]) == f"message 0: {problems[0].rule}: {problems[0].detail}"
    assert all(p.rule in RULES for p in problems)


def test_tool_message_content() -> None:
    history = [user(), calls("c1"), Message(role="tool", parts=(ToolResult(call_id="c1"), Text(text="note"))), ai("x")]
    assert validate(history, "anthropic") == [
        Problem(
            "tool-message-content",
            2,
            "tool message holds text parts besides tool results; Anthropic Messages takes only results there",
        )
    ]
