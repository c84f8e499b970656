"""tiktoken counting, loaded offline. Tests that need the real BPE files skip when this machine has none (install
the dev dependency quicktok-v1, or set CHAINSUM_TIKTOKEN_DIR / TIKTOKEN_CACHE_DIR)."""

from __future__ import annotations

import base64
import hashlib
import logging
import struct
import sys
import tempfile
from pathlib import Path

import pytest

from chainsum.errors import MissingDependencyError
from chainsum.messages import Message, ToolCall, ToolResult
from chainsum.tokens import (
    EncodingUnavailableError,
    HeuristicCounter,
    TiktokenCounter,
    _bpe_files,
    _tiktoken,  # pyright: ignore[reportPrivateUsage]
    get_counter,
    load_encoding,
)
from chainsum.tokens._bpe_files import ENCODINGS, find_ranks
from chainsum.tokens._structure import MESSAGE_OVERHEAD, REPLY_PRIMING

pytest.importorskip("tiktoken", reason="tiktoken (the chainsum[tiktoken] extra) is not installed")

NO_FILES = (
    "the {} BPE file is not on this machine: install quicktok-v1, or set CHAINSUM_TIKTOKEN_DIR or "
    "TIKTOKEN_CACHE_DIR to a folder holding it"
)


def real_blob(name: str) -> bytes:
    """The verified canonical .tiktoken bytes of `name`, or skip."""
    found = find_ranks(ENCODINGS[name])
    if found is None:
        pytest.skip(NO_FILES.format(name))
    ranks, _ = found
    return b"".join(
        base64.b64encode(t) + b" " + str(r).encode() + b"\n" for t, r in sorted(ranks.items(), key=lambda kv: kv[1])
    )


def _no_package_dirs(package: str) -> list[Path]:
    return []


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No source of BPE files but the returned folders (own dir, tiktoken cache), and no loaded encodings."""
    own, cache, tmp = tmp_path / "own", tmp_path / "cache", tmp_path / "tmp"
    for d in (own, cache, tmp):
        d.mkdir()
    monkeypatch.setenv("CHAINSUM_TIKTOKEN_DIR", str(own))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.setattr(_bpe_files, "_package_dirs", _no_package_dirs)
    monkeypatch.setattr(_tiktoken, "_loaded", {})
    return tmp_path


def test_nothing_found_means_a_clear_error_and_no_download(isolated: Path) -> None:
    assert find_ranks(ENCODINGS["o200k_base"]) is None
    with pytest.raises(EncodingUnavailableError, match="CHAINSUM_TIKTOKEN_DIR") as info:
        TiktokenCounter("o200k_base")
    assert info.value.encoding == "o200k_base"
    with pytest.raises(EncodingUnavailableError):
        get_counter("tiktoken")


def test_a_corrupt_file_is_skipped_and_logged(isolated: Path, caplog: pytest.LogCaptureFixture) -> None:
    (isolated / "own" / "o200k_base.tiktoken").write_bytes(base64.b64encode(b"a") + b" 0\n")
    (isolated / "own" / "cl100k_base.tiktoken").write_bytes(b"\xff\xfe not even base64")
    with caplog.at_level(logging.WARNING, logger="chainsum.tokens._bpe_files"):
        assert find_ranks(ENCODINGS["o200k_base"]) is None
        assert find_ranks(ENCODINGS["cl100k_base"]) is None
    assert "sha256" in caplog.text


def test_quicktok_vocab_converts_to_canonical_tiktoken() -> None:
    records = [(b"b", 1), (b"a", 0), (b"\xff\x00", 2)]
    blob = struct.pack("<I", len(records)) + b"".join(
        struct.pack("<H", len(raw)) + raw + struct.pack("<I", rank) for raw, rank in records
    )
    text = _bpe_files._quicktok_to_tiktoken(blob)  # pyright: ignore[reportPrivateUsage]
    assert text == b"YQ== 0\nYg== 1\n/wA= 2\n"
    assert _bpe_files._parse_tiktoken(text) == {b"a": 0, b"b": 1, b"\xff\x00": 2}  # pyright: ignore[reportPrivateUsage]
    with pytest.raises(ValueError, match="trailing"):
        _bpe_files._quicktok_to_tiktoken(blob + b"x")  # pyright: ignore[reportPrivateUsage]
    with pytest.raises(struct.error):
        _bpe_files._quicktok_to_tiktoken(blob[:-3])  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_tiktoken_cache_files_are_found_by_their_url_hash(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blob = real_blob(name)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / hashlib.sha1(ENCODINGS[name].url.encode()).hexdigest()).write_bytes(blob)
    monkeypatch.delenv("CHAINSUM_TIKTOKEN_DIR", raising=False)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(_bpe_files, "_package_dirs", _no_package_dirs)
    found = find_ranks(ENCODINGS[name])
    assert found is not None and found[1] == str(cache / hashlib.sha1(ENCODINGS[name].url.encode()).hexdigest())


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_our_definition_matches_tiktokens_own(name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """tiktoken's own constructor, fed the same file through its cache (so it never downloads), must agree with
    the pattern and special tokens we build the encoding with."""
    import tiktoken_ext.openai_public as public  # pyright: ignore[reportMissingTypeStubs]

    blob = real_blob(name)
    (tmp_path / hashlib.sha1(ENCODINGS[name].url.encode()).hexdigest()).write_bytes(blob)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    official = getattr(public, name)()
    ours = load_encoding(name)
    assert official["pat_str"] == ENCODINGS[name].pattern
    assert official["special_tokens"] == ENCODINGS[name].special_tokens
    assert official["mergeable_ranks"] == ours._mergeable_ranks  # pyright: ignore[reportPrivateUsage]


@pytest.fixture(scope="module")
def o200k() -> TiktokenCounter:
    try:
        return TiktokenCounter("o200k_base")
    except EncodingUnavailableError:
        pytest.skip(NO_FILES.format("o200k_base"))


def test_exact_counts(o200k: TiktokenCounter) -> None:
    assert o200k.name == "tiktoken:o200k_base"
    assert o200k.count_text("") == 0
    assert o200k.count_text("hello world") == 2
    assert o200k.count_text("The quick brown fox jumps over the lazy dog.") == 10
    # Special-token text is ordinary text in a message; it must neither raise nor count as one token.
    assert o200k.count_text("<|endoftext|>") > 1
    assert o200k.count_text("\ud800 lone surrogate") > 0


def test_framing_matches_the_shared_rules(o200k: TiktokenCounter) -> None:
    text = o200k.count_text
    history = [
        Message.of("system", "You are a helpful assistant."),
        Message.of("user", "What's the weather in Paris?"),
        Message(role="assistant", parts=(ToolCall(id="call_1", name="get_weather", arguments='{"city":"Paris"}'),)),
        Message(role="tool", parts=(ToolResult(call_id="call_1", content="sunny"),)),
    ]
    first = MESSAGE_OVERHEAD + text("system") + text("You are a helpful assistant.")
    assert o200k.count_message(history[0]) == first
    assert o200k.count_messages(history) == sum(o200k.count_message(m) for m in history) + REPLY_PRIMING


def test_long_strings_are_cached_by_value(o200k: TiktokenCounter, monkeypatch: pytest.MonkeyPatch) -> None:
    counter = TiktokenCounter("o200k_base")
    calls: list[str] = []
    real = counter._encode_len  # pyright: ignore[reportPrivateUsage]

    def spy(text: str) -> int:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(counter, "_encode_len", spy)
    long = "a fairly long string that is worth caching by value " * 3
    a, b = Message.of("user", long), Message.of("user", long)  # equal, distinct: a re-parsed history
    assert counter.count_message(a) == counter.count_message(b)
    assert calls.count(long) == 1
    counter.clear_cache()
    counter.count_message(a)
    assert calls.count(long) == 2


def test_heuristic_is_close_on_prose_and_json(o200k: TiktokenCounter) -> None:
    heuristic = HeuristicCounter()
    samples = [
        "Sure! I've updated your reservation. Your new flight departs at 10:45 from gate B12, "
        "and the confirmation code is ZX81QP. Let me know if there is anything else I can help with.",
        '{"reservation_id": "ZX81QP", "flights": [{"origin": "JFK", "destination": "SFO", "date": "2024-05-01", '
        '"price": 412}], "passengers": [{"first_name": "Ana", "last_name": "Silva"}], "cabin": "economy"}',
    ]
    for s in samples:
        exact = o200k.count_text(s)
        assert abs(heuristic.count_text(s) - exact) <= 0.15 * exact


def test_missing_tiktoken_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    with pytest.raises(MissingDependencyError, match=r'pip install "chainsum\[tiktoken\]"'):
        load_encoding("o200k_base")
