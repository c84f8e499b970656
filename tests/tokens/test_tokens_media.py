"""Image and file estimates: pixel sizes read from headers, billed as providers bill them."""

from __future__ import annotations

import base64
import struct
import zlib

from hypothesis import given
from hypothesis import strategies as st

from chainsum.messages import Image
from chainsum.tokens import image_tokens, pixel_tokens
from chainsum.tokens._media import image_size


def png(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk + struct.pack(">I", zlib.crc32(chunk))


def jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x00" * 9
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def test_pixel_tokens_follow_the_provider_rules() -> None:
    # 1024 x 1024: OpenAI 85 + 4 x 170 = 765; Anthropic 1024 * 1024 / 750 = 1398.1 -> 1399. The larger wins.
    assert pixel_tokens(1024, 1024) == 1399
    # 512 x 512: OpenAI 255, Anthropic 350.
    assert pixel_tokens(512, 512) == 350
    # Huge images are scaled down first, so the bill is bounded.
    assert pixel_tokens(20_000, 20_000) == pixel_tokens(4_000, 4_000) <= 1600
    # 768 x 2048: OpenAI bills 8 tiles (1445), more than Anthropic's scaled area (1230).
    assert pixel_tokens(768, 2048) == 85 + 170 * 8
    # 512 x 2048: Anthropic scales to 392 x 1568 and bills 820, more than OpenAI's 765.
    assert pixel_tokens(512, 2048) == 820
    assert pixel_tokens(0, 100) == 0


def test_sizes_are_read_from_headers() -> None:
    assert image_size(Image(data=png(800, 600))) == (800, 600)
    assert image_size(Image(data=jpeg(640, 480))) == (640, 480)
    assert image_size(Image(data=b"GIF89a" + struct.pack("<HH", 32, 16) + b"\x00" * 10)) == (32, 16)
    webp = b"RIFF" + b"\x00" * 4 + b"WEBPVP8X" + b"\x00" * 8 + (99).to_bytes(3, "little") + (49).to_bytes(3, "little")
    assert image_size(Image(data=webp)) == (100, 50)
    url = "data:image/png;base64," + base64.b64encode(png(300, 200) + b"\x00" * 5000).decode()
    assert image_size(Image(url=url)) == (300, 200)


def test_unknown_images_bill_as_a_default_size() -> None:
    default = pixel_tokens(1024, 1024)
    assert image_tokens(Image(url="https://example.com/cat.png")) == default
    assert image_tokens(Image(data=b"not an image at all")) == default
    assert image_tokens(Image(url="data:image/png;base64,!!!!")) == default
    assert image_tokens(Image()) == default
    assert image_tokens(Image(data=png(100, 100))) == pixel_tokens(100, 100)


@given(st.binary(max_size=200))
def test_garbage_headers_never_raise(data: bytes) -> None:
    for prefix in (b"", b"\x89PNG\r\n\x1a\n", b"\xff\xd8", b"GIF89a", b"RIFF\x00\x00\x00\x00WEBPVP8 "):
        assert image_tokens(Image(data=prefix + data)) > 0
