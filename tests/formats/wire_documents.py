"""Hypothesis strategies of wire documents, one per format: what `test_all_formats` round-trips.

Each generates documents that its format's `load` must read and `dump` must write back exactly: every shape the
format's readers know, unknown keys beside known ones, and blocks chainsum carries verbatim. A format's other
property tests use its strategy from `DOCUMENTS` too.

Import as ``from formats.wire_documents import DOCUMENTS`` (``tests/`` is on ``sys.path``).
"""

from __future__ import annotations

import base64
import string
from typing import Any

from hypothesis import strategies as st

from chainsum.formats import _gemini_parts
from formats.formats_support import json_values

__all__ = ["DOCUMENTS"]


def _openai_documents() -> st.SearchStrategy[Any]:
    """Chat Completions documents: a message list or a request object, every role and part type, unknown keys
    beside known ones, nulls and absent keys where SDK dumps have them."""
    _json_leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
    _json = st.recursive(
        _json_leaf,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=8,
    )
    _extra = st.dictionaries(st.sampled_from(["x_meta", "cache_control", "index", "audio", "annotations"]), _json)

    def _with(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
        return {**base, **extra}

    _data_url = st.binary(max_size=12).map(lambda b: "data:image/png;base64," + base64.b64encode(b).decode("ascii"))
    _part = st.one_of(
        st.builds(lambda t, x: _with({"type": "text", "text": t}, x), st.text(max_size=10), _extra),
        st.builds(lambda t: {"type": "refusal", "refusal": t}, st.text(max_size=10)),
        st.builds(
            lambda u, d: {"type": "image_url", "image_url": {"url": u, **d}},
            st.text(max_size=10) | _data_url,
            st.dictionaries(st.just("detail"), st.sampled_from(["low", "high", "auto"])),
        ),
        st.builds(lambda u: {"type": "image_url", "image_url": u}, st.text(max_size=10)),
        st.builds(
            lambda f: {"type": "file", "file": f},
            st.fixed_dictionaries(
                {},
                optional={
                    "file_data": _data_url | st.text(max_size=6),
                    "file_id": st.text(max_size=6),
                    "filename": st.none() | st.text(max_size=6),
                },
            ),
        ),
        st.builds(lambda d: {"type": "input_audio", "input_audio": d}, _json),
    )
    _content = st.none() | st.text(max_size=12) | st.lists(_part, max_size=3)
    _call = st.one_of(
        st.builds(
            lambda i, n, a, x, typed: _with(
                {"id": i, **({"type": "function"} if typed else {}), "function": {"name": n, "arguments": a}}, x
            ),
            st.text(max_size=6),
            st.text(max_size=6),
            st.text(max_size=12),
            st.dictionaries(st.just("index"), st.integers()),
            st.booleans(),
        ),
        st.builds(
            lambda i, n, a: {"id": i, "type": "custom", "custom": {"name": n, "input": a}},
            st.text(max_size=6),
            st.text(max_size=6),
            st.text(max_size=12),
        ),
        st.builds(lambda i: {"id": i, "type": "mcp", "mcp": {"server": "s"}}, st.text(max_size=6)),
    )

    @st.composite
    def _message(draw: st.DrawFn) -> dict[str, Any]:
        role = draw(st.sampled_from(["system", "developer", "user", "assistant", "tool", "function"]))
        m: dict[str, Any] = {"role": role}
        if role in ("tool", "function"):
            if role == "tool":
                m["tool_call_id"] = draw(st.text(max_size=6))
            body = draw(st.none() | st.text(max_size=12) | st.lists(_part.filter(lambda p: p["type"] == "text")))
        else:
            body = draw(_content)
        if draw(st.booleans()):
            m["content"] = body
        if draw(st.booleans()):
            m["name"] = draw(st.none() | st.text(max_size=6))
        if role == "assistant":
            if draw(st.booleans()):
                m["tool_calls"] = draw(st.none() | st.lists(_call, max_size=3))
            if draw(st.booleans()):
                m["refusal"] = draw(st.none() | st.text(max_size=8))
            if draw(st.booleans()):
                m["function_call"] = draw(
                    st.none() | st.builds(lambda n, a: {"name": n, "arguments": a}, st.text(max_size=5), st.text())
                )
        return _with(m, draw(_extra))

    _document = st.lists(_message(), max_size=6) | st.builds(
        lambda ms, model: {"model": model, "messages": ms}, st.lists(_message(), max_size=4), st.text(max_size=5)
    )
    return _document


def _openai_responses_documents() -> st.SearchStrategy[Any]:
    """Responses input: an item list or a request object, message items of every role and part type, calls,
    outputs, reasoning, and items of types chainsum has no mapping for."""
    _text = st.text(max_size=8)
    _json = st.recursive(
        st.none() | st.booleans() | st.integers() | _text,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=6,
    )
    _data_url = st.binary(max_size=9).map(lambda b: "data:image/png;base64," + base64.b64encode(b).decode("ascii"))
    _meta = st.fixed_dictionaries(
        {}, optional={"id": st.none() | _text, "status": st.sampled_from(["completed", None])}
    )
    _input_part = st.one_of(
        st.builds(lambda t, a: {"type": "input_text", "text": t, **a}, _text, st.dictionaries(st.just("x"), _json)),
        st.builds(lambda t: {"type": "output_text", "text": t}, _text),
        st.builds(
            lambda u, d: {"type": "input_image", **u, **d},
            st.fixed_dictionaries({}, optional={"image_url": st.none() | _text | _data_url, "file_id": _text}),
            st.dictionaries(st.just("detail"), st.sampled_from(["auto", "low"])),
        ),
        st.builds(
            lambda f: {"type": "input_file", **f},
            st.fixed_dictionaries(
                {},
                optional={
                    "file_data": _data_url | _text,
                    "file_id": _text,
                    "file_url": st.none() | _text,
                    "filename": st.none() | _text,
                },
            ),
        ),
        st.builds(lambda d: {"type": "input_audio", "input_audio": d}, _json),
    )
    _output_part = st.one_of(
        st.builds(
            lambda t, a: {"type": "output_text", "text": t, **a},
            _text,
            st.fixed_dictionaries({}, optional={"annotations": st.lists(_json, max_size=2), "logprobs": st.just([])}),
        ),
        st.builds(lambda t: {"type": "refusal", "refusal": t}, _text),
        st.builds(lambda t: {"type": "input_text", "text": t}, _text),
        st.builds(lambda d: {"type": "output_audio", "data": d}, _text),
    )
    _item = st.one_of(
        st.builds(
            lambda role, content, typed, meta: {**typed, "role": role, "content": content, **meta},
            st.sampled_from(["user", "system", "developer"]),
            _text | st.lists(_input_part, max_size=3),
            st.sampled_from([{}, {"type": "message"}]),
            _meta,
        ),
        st.builds(
            lambda content, typed, meta: {**typed, "role": "assistant", "content": content, **meta},
            _text | st.lists(_output_part, max_size=3),
            st.sampled_from([{}, {"type": "message"}]),
            _meta,
        ),
        st.builds(
            lambda c, n, a, meta: {"type": "function_call", "call_id": c, "name": n, "arguments": a, **meta},
            _text,
            _text,
            _text,
            _meta,
        ),
        st.builds(
            lambda c, n, a: {"type": "custom_tool_call", "call_id": c, "name": n, "input": a},
            _text,
            _text,
            _text,
        ),
        st.builds(
            lambda kind, c, out, meta: {"type": kind, "call_id": c, "output": out, **meta},
            st.sampled_from(["function_call_output", "custom_tool_call_output"]),
            _text,
            _text | st.lists(_input_part.filter(lambda p: p["type"] != "input_audio"), max_size=2),
            _meta,
        ),
        st.builds(
            lambda summary, enc, rest: {"type": "reasoning", "id": "rs", "summary": summary, **enc, **rest},
            st.lists(st.builds(lambda t: {"type": "summary_text", "text": t}, st.text(alphabet="ab\n", max_size=5))),
            st.fixed_dictionaries({}, optional={"encrypted_content": st.none() | _text}),
            st.fixed_dictionaries({}, optional={"content": st.lists(_json, max_size=2), "status": _text}),
        ),
        st.builds(
            lambda kind, d: {"type": kind, "id": "x", "data": d},
            st.sampled_from(["web_search_call", "mcp_call"]),
            _json,
        ),
    )
    _document = st.lists(_item, max_size=7) | st.builds(
        lambda items, model: {"model": model, "input": items}, st.lists(_item, max_size=5), _text
    )
    return _document


def _tau2_documents() -> st.SearchStrategy[Any]:
    """tau2-bench message lists: participants with tool calls (the user's too), system messages, results, and
    multi-result tool messages."""
    _text = st.text(max_size=8)
    _json = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _text,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
        max_leaves=8,
    )
    _meta = st.fixed_dictionaries(
        {}, optional={"turn_idx": st.none() | st.integers(0, 99), "timestamp": _text, "cost": st.floats(0, 1)}
    )
    _call = st.builds(
        lambda i, n, a, r: {**i, "name": n, "arguments": a, **r},
        st.fixed_dictionaries({}, optional={"id": _text}),
        _text,
        st.dictionaries(_text, _json, max_size=3),
        st.fixed_dictionaries({}, optional={"requestor": st.sampled_from(["user", "assistant"])}),
    )
    _result = st.builds(
        lambda i, c, r, e, meta: {"id": i, "role": "tool", **c, **r, **e, **meta},
        _text,
        st.fixed_dictionaries({}, optional={"content": st.none() | _text}),
        st.fixed_dictionaries({}, optional={"requestor": st.sampled_from(["user", "assistant"])}),
        st.fixed_dictionaries({}, optional={"error": st.booleans()}),
        _meta,
    )
    _participant = st.builds(
        lambda role, c, calls, meta: {"role": role, **c, **calls, **meta},
        st.sampled_from(["user", "assistant"]),
        st.fixed_dictionaries({}, optional={"content": st.none() | _text}),
        st.fixed_dictionaries({}, optional={"tool_calls": st.none() | st.lists(_call, max_size=3)}),
        _meta,
    )
    _system = st.builds(
        lambda c, meta: {"role": "system", **c, **meta}, st.fixed_dictionaries({}, optional={"content": _text}), _meta
    )
    _multi = st.builds(lambda subs: {"role": "tool", "tool_messages": subs}, st.lists(_result, max_size=3))
    _document = st.lists(st.one_of(_participant, _system, _result, _multi), max_size=6)
    return _document


def _gemini_documents() -> st.SearchStrategy[Any]:
    """Gemini contents: bare or in a request, camelCase or snake_case, every part kind, thought signatures,
    system instructions of each shape."""
    _json = json_values()

    _texts = st.text(string.ascii_letters + ' {}"\n\\é中', max_size=12)
    _objects = st.dictionaries(st.sampled_from(["a", "b", "city", "n"]), _json, max_size=3)
    _signatures = st.binary(min_size=1, max_size=12).map(lambda b: base64.b64encode(b).decode())

    @st.composite
    def _b64(draw: st.DrawFn) -> str:
        raw = base64.b64encode(draw(st.binary(max_size=9))).decode()
        return draw(st.sampled_from([raw, raw.rstrip("="), raw.replace("+", "-").replace("/", "_")]))

    @st.composite
    def _part(draw: st.DrawFn, snake: bool) -> dict[str, Any]:
        def k(name: str) -> str:
            return _gemini_parts.SNAKE[name] if snake else name

        kind = draw(st.sampled_from(["text", "thought", "call", "response", "inline", "file", "opaque", "signature"]))
        part: dict[str, Any]
        if kind == "text":
            part = {"text": draw(_texts)}
            if draw(st.booleans()):
                part["thought"] = False
        elif kind == "thought":
            part = {"text": draw(_texts), "thought": True}
        elif kind == "call":
            call: dict[str, Any] = {"name": draw(_texts)}
            if draw(st.booleans()):
                call["args"] = draw(_objects)
            if draw(st.booleans()):
                call["id"] = draw(st.sampled_from(["", "fc-1", "x"]))
            part = {k("functionCall"): call}
        elif kind == "response":
            response = draw(
                st.one_of(
                    _objects, st.builds(lambda key, t: {key: t}, st.sampled_from(["output", "result", "error"]), _texts)
                )
            )
            part = {k("functionResponse"): {"name": draw(_texts), "response": response}}
        elif kind == "inline":
            mime = draw(st.sampled_from(["image/png", "application/pdf", "audio/wav"]))
            part = {k("inlineData"): {k("mimeType"): mime, "data": draw(_b64())}}
        elif kind == "file":
            inner = {k("fileUri"): draw(st.sampled_from(["gs://b/x", "https://x/y", "data:image/png;base64,AAAA"]))}
            if draw(st.booleans()):
                inner[k("mimeType")] = draw(st.sampled_from(["image/jpeg", "video/mp4"]))
            if draw(st.booleans()):
                inner[k("displayName")] = draw(_texts)
            part = {k("fileData"): inner}
        elif kind == "opaque":
            part = {k(draw(st.sampled_from(["executableCode", "codeExecutionResult"]))): draw(_objects)}
        else:
            part = {k("thoughtSignature"): draw(_signatures)}
        if kind in ("text", "call") and draw(st.booleans()):
            part[k("thoughtSignature")] = draw(_signatures)
        if draw(st.integers(0, 4)) == 0:
            part[draw(st.sampled_from([k("partMetadata"), "x-extra", k("videoMetadata")]))] = draw(_json)
        if snake and draw(st.booleans()):
            for name in ("video_metadata", "executable_code", "code_execution_result"):
                part.setdefault(name, None)
        return part

    @st.composite
    def _content(draw: st.DrawFn) -> dict[str, Any]:
        snake = draw(st.booleans())
        content: dict[str, Any] = {"parts": draw(st.lists(_part(snake), max_size=4))}
        role = draw(st.sampled_from(["user", "model", "function", None, "absent"]))
        if role != "absent":
            content["role"] = role
        if draw(st.integers(0, 5)) == 0:
            content["x-turn"] = draw(_json)
        return content

    @st.composite
    def _documents(draw: st.DrawFn) -> Any:
        contents = draw(st.lists(_content(), max_size=6))
        if draw(st.booleans()):
            return contents
        doc: dict[str, Any] = {"contents": contents}
        system = draw(st.sampled_from(["none", "content", "text", "null"]))
        key = draw(st.sampled_from(["systemInstruction", "system_instruction"]))
        if system == "content":
            doc[key] = {"parts": draw(st.lists(_part(False), max_size=2))}
        elif system == "text":
            doc[key] = draw(_texts)
        elif system == "null":
            doc[key] = None
        if draw(st.booleans()):
            doc["generationConfig"] = draw(_objects)
        return doc

    return _documents()


def _bedrock_documents() -> st.SearchStrategy[Any]:
    """Bedrock Converse / Strands messages: bare or in a request, every block kind, bytes in each encoding,
    unknown keys beside and inside members, system blocks."""
    _json = json_values()

    _texts = st.text(string.ascii_letters + ' {}"\n\\é中', max_size=12)
    _objects = st.dictionaries(st.sampled_from(["a", "b", "q", "n"]), _json, max_size=3)
    _ids = st.sampled_from(["t1", "t2", "tooluse_x", ""])

    @st.composite
    def _bytes(draw: st.DrawFn) -> Any:
        raw = base64.b64encode(draw(st.binary(max_size=9))).decode()
        text = draw(st.sampled_from([raw, raw.rstrip("="), raw.replace("+", "-").replace("/", "_")]))
        return {"__bytes_encoded__": True, "data": text} if draw(st.booleans()) else text

    @st.composite
    def _source(draw: st.DrawFn, document: bool) -> dict[str, Any]:
        kinds = ["bytes", "s3", "text"] if document else ["bytes", "s3"]
        kind = draw(st.sampled_from(kinds))
        if kind == "bytes":
            return {"bytes": draw(_bytes())}
        if kind == "text":
            return {"text": draw(_texts)}
        location: dict[str, Any] = {
            "uri": draw(st.sampled_from(["s3://b/k", "https://x", "data:image/png;base64,AAAA"]))
        }
        if draw(st.booleans()):
            location["bucketOwner"] = "123"
        return {"s3Location": location}

    @st.composite
    def _media(draw: st.DrawFn, kind: str) -> dict[str, Any]:
        body: dict[str, Any] = {"source": draw(_source(kind == "document"))}
        if draw(st.booleans()):
            body["format"] = draw(st.sampled_from(["png", "jpeg"] if kind == "image" else ["pdf", "md", "rtf"]))
        if kind == "document" and draw(st.booleans()):
            body["name"] = draw(_texts)
        return {kind: body}

    @st.composite
    def _result_item(draw: st.DrawFn) -> dict[str, Any]:
        kind = draw(st.sampled_from(["text", "json", "image", "document", "other"]))
        if kind == "text":
            return {"text": draw(_texts)}
        if kind == "json":
            return {"json": draw(_json)}
        if kind == "other":
            return {"video": draw(_objects)}
        return draw(_media(kind))

    @st.composite
    def _block(draw: st.DrawFn) -> dict[str, Any]:
        kind = draw(st.sampled_from(["text", "image", "document", "use", "result", "reasoning", "opaque"]))
        block: dict[str, Any]
        if kind == "text":
            block = {"text": draw(_texts)}
        elif kind in ("image", "document"):
            block = draw(_media(kind))
        elif kind == "use":
            use: dict[str, Any] = {"toolUseId": draw(_ids), "name": draw(_texts)}
            if draw(st.booleans()):
                use["input"] = draw(_json)
            block = {"toolUse": use}
        elif kind == "result":
            result: dict[str, Any] = {"toolUseId": draw(_ids)}
            if draw(st.integers(0, 4)):
                result["content"] = draw(st.lists(_result_item(), max_size=3))
            if draw(st.integers(0, 3)):
                result["status"] = draw(st.sampled_from(["success", "error"]))
            block = {"toolResult": result}
        elif kind == "reasoning":
            body: dict[str, Any] = {}
            if draw(st.booleans()):
                text: dict[str, Any] = {"text": draw(_texts)}
                if draw(st.booleans()):
                    text["signature"] = draw(_texts)
                body["reasoningText"] = text
            else:
                body["redactedContent"] = draw(_bytes())
            block = {"reasoningContent": body}
        else:
            block = {draw(st.sampled_from(["cachePoint", "guardContent", "video", "somethingNew"])): draw(_objects)}
        if kind != "opaque" and draw(st.integers(0, 6)) == 0:
            block["x-extra"] = draw(_json)  # an unknown key beside the member
        member = next(iter(block.values()))
        if isinstance(member, dict) and draw(st.integers(0, 6)) == 0:
            member["x-inner"] = draw(_json)  # and one inside it
        return block

    @st.composite
    def _documents(draw: st.DrawFn) -> Any:
        messages: list[Any] = []
        for _ in range(draw(st.integers(0, 6))):
            message: dict[str, Any] = {
                "role": draw(st.sampled_from(["user", "assistant"])),
                "content": draw(st.lists(_block(), max_size=4)),
            }
            if draw(st.integers(0, 5)) == 0:
                message["metadata"] = draw(_objects)
            messages.append(message)
        if draw(st.booleans()):
            return messages
        doc: dict[str, Any] = {"messages": messages}
        if draw(st.booleans()):
            doc["system"] = draw(
                st.lists(
                    st.one_of(st.builds(lambda t: {"text": t}, _texts), st.just({"cachePoint": {"type": "default"}})),
                    max_size=2,
                )
            )
        if draw(st.booleans()):
            doc["inferenceConfig"] = draw(_objects)
        return doc

    return _documents()


def _anthropic_documents() -> st.SearchStrategy[Any]:
    """Anthropic Messages: a message list, a request object, or one with a system prompt; every block type,
    cache control, server-tool blocks, system messages inside the list (the mid-conversation beta)."""
    _TEXTS = st.text(max_size=8)
    _IDS = st.text(alphabet="abc123_", min_size=1, max_size=6)
    _JSON_VALUES = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _TEXTS,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXTS, inner, max_size=3),
        max_leaves=8,
    )
    _CACHE = st.sampled_from([{}, {"cache_control": {"type": "ephemeral"}}])

    def _with(block: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
        return {**block, **extra}

    _TEXT_BLOCK = st.builds(_with, st.builds(lambda t: {"type": "text", "text": t}, _TEXTS), _CACHE)
    _IMAGE_BLOCK = st.one_of(
        st.builds(
            lambda b, mt: {
                "type": "image",
                "source": {"type": "base64", "media_type": mt, "data": base64.b64encode(b).decode()},
            },
            st.binary(max_size=6),
            st.sampled_from(["image/png", "image/jpeg"]),
        ),
        st.builds(lambda u: {"type": "image", "source": {"type": "url", "url": "https://x/" + u}}, _IDS),
        st.builds(lambda f: {"type": "image", "source": {"type": "file", "file_id": f}}, _IDS),
    )
    _DOCUMENT_BLOCK = st.builds(
        _with,
        st.one_of(
            st.builds(
                lambda t: {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": t}},
                _TEXTS,
            ),
            st.builds(
                lambda b: {
                    "type": "document",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": base64.b64encode(b).decode()},
                },
                st.binary(max_size=6),
            ),
            st.builds(lambda u: {"type": "document", "source": {"type": "url", "url": u}}, _IDS),
        ),
        st.sampled_from([{}, {"title": "t"}, {"title": None}, {"context": "c", "citations": {"enabled": True}}]),
    )
    _RESULT_ITEM = st.one_of(
        _TEXT_BLOCK, _IMAGE_BLOCK, _DOCUMENT_BLOCK, st.just({"type": "search_result", "title": "s"})
    )

    def _tool_result(call_id: str, content: Any, is_error: Any, cache: dict[str, Any]) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id}
        if content is not None:
            block["content"] = content
        if is_error is not None:
            block["is_error"] = is_error
        return block | cache

    _BLOCK = st.one_of(
        _TEXT_BLOCK,
        _IMAGE_BLOCK,
        _DOCUMENT_BLOCK,
        st.builds(
            lambda i, n, a, c: {"type": "tool_use", "id": i, "name": n, "input": a} | c,
            _IDS,
            _IDS,
            st.dictionaries(_TEXTS, _JSON_VALUES, max_size=3),
            _CACHE,
        ),
        st.builds(
            _tool_result,
            _IDS,
            st.none() | _TEXTS | st.lists(_RESULT_ITEM, max_size=3),
            st.sampled_from([None, True, False]),
            _CACHE,
        ),
        st.builds(lambda t: {"type": "thinking", "thinking": t}, _TEXTS),
        st.builds(lambda t, s: {"type": "thinking", "thinking": t, "signature": s}, _TEXTS, _TEXTS),
        st.builds(lambda d: {"type": "redacted_thinking", "data": d}, _IDS),
        st.builds(lambda i: {"type": "server_tool_use", "id": i, "name": "web_search", "input": {"q": i}}, _IDS),
    )
    _MESSAGE = st.builds(
        lambda role, content, extra: {"role": role, "content": content} | extra,
        st.sampled_from(["user", "assistant"]),
        _TEXTS | st.lists(_BLOCK, max_size=5),
        st.sampled_from([{}, {"id": "msg_1"}]),
    )
    _SYSTEM = st.one_of(_TEXTS, st.lists(_TEXT_BLOCK, max_size=2))
    # the mid-conversation-system beta: a system message inside the list, anywhere
    _INLINE_SYSTEM = st.builds(
        lambda content, extra: {"role": "system", "content": content} | extra, _SYSTEM, st.sampled_from([{}, {"x": 1}])
    )
    _MESSAGES = st.lists(st.one_of(_MESSAGE, _MESSAGE, _MESSAGE, _INLINE_SYSTEM), max_size=6)
    _DOCUMENTS = st.one_of(
        _MESSAGES,
        st.builds(lambda ms: {"model": "m", "messages": ms, "max_tokens": 9}, _MESSAGES),
        st.builds(lambda s, ms: {"system": s, "messages": ms}, _SYSTEM, _MESSAGES),
    )
    return _DOCUMENTS


DOCUMENTS: dict[str, st.SearchStrategy[Any]] = {
    "openai": _openai_documents(),
    "openai-responses": _openai_responses_documents(),
    "tau2": _tau2_documents(),
    "gemini": _gemini_documents(),
    "bedrock": _bedrock_documents(),
    "anthropic": _anthropic_documents(),
}
"""Wire documents of each format, by format name."""
