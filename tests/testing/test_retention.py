"""The independent identifier matcher the retention figures are measured with."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chainsum.messages import Message, Text, ToolCall, ToolResult
from chainsum.testing.retention import GrowingIdentifiers, identifiers, kept_identifiers, texts


def test_it_finds_each_kind_of_identifier_and_no_plain_words() -> None:
    text = (
        "see src/app/main.py and https://example.com/x?y=1; order ORD-7731 took 250 ms, code 40213, "
        "field total_cents in OrderTotal; the cat sat on the mat"
    )
    found = identifiers(text)
    for expected in ("src/app/main.py", "https://example.com/x?y=1;", "ORD-7731", "250 ms", "40213"):
        assert expected in found, expected
    assert {"total_cents", "OrderTotal"} <= found
    assert not {"cat", "sat", "mat", "the"} & found


def test_texts_covers_calls_and_results_and_kept_identifiers_is_the_intersection() -> None:
    original = [
        Message(role="user", parts=(Text(text="fix src/a.py"),)),
        Message(role="assistant", parts=(ToolCall(id="c1", name="read_file", arguments='{"path": "src/b.py"}'),)),
        Message(role="tool", parts=(ToolResult(call_id="c1", content="KeyError in total_cents"),)),
    ]
    assert "read_file" in texts(original) and "total_cents" in texts(original)
    output = [Message(role="user", parts=(Text(text="summary: src/a.py and total_cents, plus new_name"),))]
    assert kept_identifiers(original, output) == {"src/a.py", "total_cents"}


def test_the_line_numbers_of_a_file_listing_are_not_identifiers() -> None:
    listing = "   120→def total_cents(order):\n   121→    return 4500\n   122\tpass"
    assert identifiers(listing) == {"total_cents", "4500"}
    assert "120" in identifiers("order 120 of 121 shipped, 122 left")  # a number in prose still counts


_LINE_BITS = st.sampled_from(
    [
        "250",
        " ms",
        "s",
        "KB",
        "\n",
        "   12→",
        "\t",
        "src/a",
        "/b.py",
        "ORD-",
        "7731",
        "total_",
        "cents",
        "OrderTotal",
        "https://x.io/p",
        " ",
        ".",
        "-",
        "3.5",
        "%",
        "USD",
        "ab",
    ]
)
_TEXTS = st.lists(_LINE_BITS, max_size=12).map("".join)


@given(st.lists(st.lists(_TEXTS, max_size=3), max_size=8))
def test_growing_identifiers_equal_a_rescan_of_the_whole_history(batches: list[list[str]]) -> None:
    """Whatever the pieces (numbers whose unit starts the next line, paths cut at a line end, gutters), the
    identifiers kept up to date as messages are added are those of the whole history scanned at once."""
    grown = GrowingIdentifiers()
    history: list[Message] = []
    for batch in batches:
        added = [Message(role="user", parts=tuple(Text(text=t) for t in batch))]
        grown.add(added)
        history.extend(added)
        assert grown.found == identifiers(texts(history))


def test_growing_identifiers_settle_a_number_only_once_its_unit_cannot_follow() -> None:
    grown = GrowingIdentifiers()
    grown.add([Message(role="user", parts=(Text(text="took 250"),))])
    assert grown.found == {"250"}
    grown.add([Message(role="user", parts=(Text(text="ms later"),))])
    assert grown.found == identifiers("took 250\nms later") == {"250\nms"}
