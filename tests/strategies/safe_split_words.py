"""Tiny deterministic token counter and message builders shared by the safe-split tests."""

from __future__ import annotations

from collections.abc import Sequence

from chainsum.messages import Message, Text, ToolCall, ToolResult


class WordCounter:
    """One token per whitespace-separated word of text and tool-result text, one per other part."""

    name = "words"

    def count_text(self, text: str) -> int:
        return len(text.split())

    def count_message(self, message: Message) -> int:
        total = 0
        for part in message.parts:
            if isinstance(part, Text | ToolResult):
                total += self.count_text(part.text)
            else:
                total += 1
        return total

    def count_messages(self, messages: Sequence[Message]) -> int:
        return sum(self.count_message(m) for m in messages)


COUNTER = WordCounter()


def words(k: int) -> str:
    return " ".join(["w"] * k)


def sys(text: str = "be brief") -> Message:
    return Message.of("system", text)


def u(k: int = 5) -> Message:
    return Message.of("user", words(k))


def a(k: int = 5, *calls: str) -> Message:
    parts: list[Text | ToolCall] = [Text(text=words(k))] if k else []
    parts += [ToolCall(id=c, name="f") for c in calls]
    return Message(role="assistant", parts=tuple(parts))


def tool(call_id: str, k: int = 1) -> Message:
    return Message(role="tool", parts=(ToolResult(call_id=call_id, content=words(k)),))
