"""The streamed and Responses-API answers of `chainsum.testing.FakeLLMServer`: what the OpenAI and Anthropic SDKs
read when they ask for ``stream=True``, and a ``/v1/responses`` answer, each built from one text."""

from __future__ import annotations

import json
import re
from typing import cast

__all__ = ["anthropic_events", "models_list", "openai_chunks", "pieces", "responses_answer", "responses_events"]


def pieces(text: str) -> list[str]:
    """The text cut into word-sized deltas (each keeps its leading space, the last its trailing space), at least
    one; joined, they are the text."""
    return re.findall(r"\s*\S+\s*$|\s*\S+", text) or [text]


def _sse(data: object, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def openai_chunks(model: str, text: str) -> list[bytes]:
    """Chat Completions chunks: the role, one chunk per piece, the finish reason, then ``[DONE]``."""

    def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
        return _sse(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
            }
        )

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": p}) for p in pieces(text)]
    out.append(chunk({}, "stop"))
    out.append(b"data: [DONE]\n\n")
    return out


def anthropic_events(model: str, text: str) -> list[bytes]:
    """Messages streaming events, named as the API names them."""
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": list[object](),
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        },
    }
    out = [
        _sse(start, "message_start"),
        _sse(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            "content_block_start",
        ),
    ]
    out += [
        _sse(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}},
            "content_block_delta",
        )
        for p in pieces(text)
    ]
    out.append(_sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
    out.append(
        _sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
            "message_delta",
        )
    )
    out.append(_sse({"type": "message_stop"}, "message_stop"))
    return out


def responses_answer(model: str, text: str) -> object:
    """A completed Responses API answer with one output message."""
    return {
        "id": "resp_fake",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": model,
        "output": [
            {
                "type": "message",
                "id": "msg_fake",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": list[object]()}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": list[object](),
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "total_tokens": 15,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def models_list() -> object:
    return {"object": "list", "data": [{"id": "fake-model", "object": "model", "created": 0, "owned_by": "chainsum"}]}


def responses_events(model: str, text: str) -> list[bytes]:
    """Responses API streaming events: created, one text delta per piece, done, completed (with the whole answer)."""
    whole = cast(dict[str, object], responses_answer(model, text))
    created: dict[str, object] = {**whole, "status": "in_progress", "output": list[object]()}
    out = [_sse({"type": "response.created", "sequence_number": 0, "response": created}, "response.created")]
    seq = 1
    for piece in pieces(text):
        delta = {
            "type": "response.output_text.delta",
            "sequence_number": seq,
            "item_id": "msg_fake",
            "output_index": 0,
            "content_index": 0,
            "delta": piece,
            "logprobs": list[object](),
        }
        out.append(_sse(delta, "response.output_text.delta"))
        seq += 1
    done = {
        "type": "response.output_text.done",
        "sequence_number": seq,
        "item_id": "msg_fake",
        "output_index": 0,
        "content_index": 0,
        "text": text,
        "logprobs": list[object](),
    }
    out.append(_sse(done, "response.output_text.done"))
    out.append(
        _sse({"type": "response.completed", "sequence_number": seq + 1, "response": whole}, "response.completed")
    )
    return out
