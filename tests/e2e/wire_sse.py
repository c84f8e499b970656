"""The fake upstream's answers, streamed as each provider streams them: Anthropic Messages events, OpenAI Responses
events and Chat Completions chunks.

One provider-neutral `Answer` (reasoning, text, at most one tool call) is rendered three ways. The shapes follow
the providers' streaming references closely (event names, ``index``/``output_index``, ``sequence_number``, usage
in the last event), because the clients parse them with their own strict code: Claude Code with the Anthropic
TypeScript SDK, Codex with its Rust types, the Agents SDK with the OpenAI Python SDK.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Answer", "Call", "anthropic_stream", "chat_stream", "responses_stream"]


@dataclass(frozen=True, slots=True)
class Call:
    id: str
    name: str
    arguments: dict[str, Any] | str
    """JSON arguments of a function tool, or the free-form input of a custom tool (Responses only: Codex's
    ``exec``, which takes JavaScript)."""

    @property
    def json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass(frozen=True, slots=True)
class Answer:
    """What the model says in one turn."""

    number: int
    """The script step this answer asks for (one past the last step for the final answer)."""
    text: str
    call: Call | None = None
    reasoning: str | None = None
    reasoning_token: str | None = None
    """The Anthropic signature or the Responses ``encrypted_content`` that goes with `reasoning`."""
    input_tokens: int = 1_000
    """The usage reported for the request (a client's own compaction is triggered by it)."""


def _sse(data: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def _halves(text: str) -> list[str]:
    """Two deltas, so that clients really join streamed pieces."""
    cut = len(text) // 2
    return [p for p in (text[:cut], text[cut:]) if p]


def anthropic_stream(answer: Answer, model: str) -> Iterator[bytes]:
    """Messages streaming: ``message_start``, one ``content_block_*`` group per block (thinking with its
    signature, text, tool_use with its input as JSON deltas), ``message_delta`` with the stop reason and usage,
    ``message_stop``."""

    def event(data: dict[str, Any]) -> bytes:
        return _sse(data, data["type"])

    yield event(
        {
            "type": "message_start",
            "message": {
                "id": f"msg_e2e_{answer.number:02d}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": answer.input_tokens,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 1,
                },
            },
        }
    )
    yield event({"type": "ping"})
    index = 0
    if answer.reasoning is not None:
        yield event(
            {"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": ""}}
        )
        for piece in _halves(answer.reasoning):
            yield event(
                {"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": piece}}
            )
        yield event(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "signature_delta", "signature": answer.reasoning_token or ""},
            }
        )
        yield event({"type": "content_block_stop", "index": index})
        index += 1
    yield event({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
    for piece in _halves(answer.text):
        yield event({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}})
    yield event({"type": "content_block_stop", "index": index})
    index += 1
    if answer.call is not None:
        call = answer.call
        yield event(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
            }
        )
        for piece in _halves(call.json):
            yield event(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece},
                }
            )
        yield event({"type": "content_block_stop", "index": index})
    yield event(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use" if answer.call else "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 60},
        }
    )
    yield event({"type": "message_stop"})


def responses_stream(answer: Answer, model: str) -> Iterator[bytes]:
    """Responses streaming: ``response.created``, each output item added, its deltas and done (a reasoning item
    with its summary and ``encrypted_content``, a message, a function call), then ``response.completed`` holding
    the whole output and the usage."""
    sequence = 0

    def event(data: dict[str, Any]) -> bytes:
        nonlocal sequence
        data = {**data, "sequence_number": sequence}
        sequence += 1
        return _sse(data, data["type"])

    response: dict[str, Any] = {
        "id": f"resp_e2e_{answer.number:02d}",
        "object": "response",
        "created_at": 1_700_000_000 + answer.number,
        "status": "in_progress",
        "model": model,
        "output": [],
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
    }
    yield event({"type": "response.created", "response": response})
    yield event({"type": "response.in_progress", "response": response})
    output: list[dict[str, Any]] = []
    if answer.reasoning is not None:
        item_id = f"rs_e2e_{answer.number:02d}"
        done = {
            "type": "reasoning",
            "id": item_id,
            "summary": [{"type": "summary_text", "text": answer.reasoning}],
            "encrypted_content": answer.reasoning_token,
        }
        at = len(output)
        yield event(
            {
                "type": "response.output_item.added",
                "output_index": at,
                "item": {"type": "reasoning", "id": item_id, "summary": [], "encrypted_content": None},
            }
        )
        part = {"type": "summary_text", "text": ""}
        yield event(
            {
                "type": "response.reasoning_summary_part.added",
                "item_id": item_id,
                "output_index": at,
                "summary_index": 0,
                "part": part,
            }
        )
        for piece in _halves(answer.reasoning):
            yield event(
                {
                    "type": "response.reasoning_summary_text.delta",
                    "item_id": item_id,
                    "output_index": at,
                    "summary_index": 0,
                    "delta": piece,
                }
            )
        yield event(
            {
                "type": "response.reasoning_summary_text.done",
                "item_id": item_id,
                "output_index": at,
                "summary_index": 0,
                "text": answer.reasoning,
            }
        )
        yield event(
            {
                "type": "response.reasoning_summary_part.done",
                "item_id": item_id,
                "output_index": at,
                "summary_index": 0,
                "part": {"type": "summary_text", "text": answer.reasoning},
            }
        )
        yield event({"type": "response.output_item.done", "output_index": at, "item": done})
        output.append(done)
    if answer.call is None or answer.text:
        item_id = f"msg_e2e_{answer.number:02d}"
        at = len(output)
        text_part = {"type": "output_text", "text": answer.text, "annotations": []}
        done = {"type": "message", "id": item_id, "role": "assistant", "status": "completed", "content": [text_part]}
        yield event(
            {
                "type": "response.output_item.added",
                "output_index": at,
                "item": {**done, "status": "in_progress", "content": []},
            }
        )
        where = {"item_id": item_id, "output_index": at, "content_index": 0}
        yield event(
            {
                "type": "response.content_part.added",
                **where,
                "part": {"type": "output_text", "text": "", "annotations": []},
            }
        )
        for piece in _halves(answer.text):
            yield event({"type": "response.output_text.delta", **where, "delta": piece, "logprobs": []})
        yield event({"type": "response.output_text.done", **where, "text": answer.text, "logprobs": []})
        yield event({"type": "response.content_part.done", **where, "part": text_part})
        yield event({"type": "response.output_item.done", "output_index": at, "item": done})
        output.append(done)
    if answer.call is not None:
        call = answer.call
        item_id = f"fc_e2e_{answer.number:02d}"
        at = len(output)
        custom = isinstance(call.arguments, str)
        field, kind, deltas = (
            ("input", "custom_tool_call", "response.custom_tool_call_input")
            if custom
            else ("arguments", "function_call", "response.function_call_arguments")
        )
        done = {"type": kind, "id": item_id, "call_id": call.id, "name": call.name, field: call.json}
        done["status"] = "completed"
        yield event(
            {
                "type": "response.output_item.added",
                "output_index": at,
                "item": {**done, field: "", "status": "in_progress"},
            }
        )
        for piece in _halves(call.json):
            yield event({"type": f"{deltas}.delta", "item_id": item_id, "output_index": at, "delta": piece})
        yield event({"type": f"{deltas}.done", "item_id": item_id, "output_index": at, field: call.json})
        yield event({"type": "response.output_item.done", "output_index": at, "item": done})
        output.append(done)
    usage = {
        "input_tokens": answer.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 60,
        "output_tokens_details": {"reasoning_tokens": 20},
        "total_tokens": answer.input_tokens + 60,
    }
    yield event(
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": output, "usage": usage},
        }
    )


def chat_stream(answer: Answer, model: str) -> Iterator[bytes]:
    """Chat Completions chunks: the role, the text in pieces, the tool call's id and name then its arguments in
    pieces, the finish reason, a usage chunk (``stream_options.include_usage``), then ``[DONE]``."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(
            {
                "id": f"chatcmpl-e2e-{answer.number:02d}",
                "object": "chat.completion.chunk",
                "created": 1_700_000_000 + answer.number,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
            }
        )

    yield chunk({"role": "assistant", "content": ""})
    for piece in _halves(answer.text):
        yield chunk({"content": piece})
    if answer.call is not None:
        call = answer.call
        yield chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
                ]
            }
        )
        for piece in _halves(call.json):
            yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
    yield chunk({}, "tool_calls" if answer.call else "stop")
    usage = {"prompt_tokens": answer.input_tokens, "completion_tokens": 60, "total_tokens": answer.input_tokens + 60}
    yield _sse(
        {
            "id": f"chatcmpl-e2e-{answer.number:02d}",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000 + answer.number,
            "model": model,
            "choices": [],
            "usage": usage,
        }
    )
    yield b"data: [DONE]\n\n"
