"""Token estimates for images and files, the way providers bill them: by pixel size, not by byte count.

Providers do not tokenize image bytes. OpenAI (high detail) scales the image to fit 2048 x 2048, then its short
side to 768, and bills 85 tokens plus 170 per 512-pixel tile; Anthropic scales the long side to at most 1568 and
bills about width x height / 750. We read the pixel size from the image header (PNG, GIF, JPEG, WebP, inline or
as a base64 ``data:`` URL) and take the larger of the two rules, so the estimate is safe for either provider.
An image whose size cannot be read (a remote URL, an unknown format) is billed as a 1024 x 1024 image.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from collections.abc import Callable

from ..messages import File, Image

__all__ = ["DEFAULT_IMAGE_SIZE", "file_tokens", "image_size", "image_tokens", "pixel_tokens"]

DEFAULT_IMAGE_SIZE = (1024, 1024)
"""What an image of unknown size is billed as."""

_HEADER_BYTES = 64 * 1024
"""How much of an image we look at for its size: headers sit at the start (a JPEG's SOF after its EXIF block)."""

_PDF_PAGE_TOKENS = 1500
"""Anthropic bills a PDF page as its text plus an image of the page: 1500 to 3000 tokens is its own guide."""


def pixel_tokens(width: int, height: int) -> int:
    """The larger of the OpenAI high-detail and Anthropic bills for an image of this size."""
    if width <= 0 or height <= 0:
        return 0
    # OpenAI: fit in 2048 x 2048, then short side to 768 (only ever scaled down), then 512-pixel tiles.
    w, h = float(width), float(height)
    scale = min(1.0, 2048 / max(w, h))
    w, h = w * scale, h * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    openai = 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)
    # Anthropic: long side to at most 1568 and about 1.15 megapixels, then pixels / 750.
    w, h = float(width), float(height)
    scale = min(1.0, 1568 / max(w, h), math.sqrt(1_150_000 / (w * h)))
    anthropic = math.ceil(w * scale * h * scale / 750)
    return max(openai, anthropic)


def _png(data: bytes) -> tuple[int, int] | None:
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24 and data[12:16] == b"IHDR":
        w, h = struct.unpack(">II", data[16:24])
        return int(w), int(h)
    return None


def _gif(data: bytes) -> tuple[int, int] | None:
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        w, h = struct.unpack("<HH", data[6:10])
        return int(w), int(h)
    return None


def _webp(data: bytes) -> tuple[int, int] | None:
    if data[:4] != b"RIFF" or data[8:12] != b"WEBP" or len(data) < 30:
        return None
    chunk = data[12:16]
    if chunk == b"VP8 ":
        w, h = struct.unpack("<HH", data[26:30])
        return int(w) & 0x3FFF, int(h) & 0x3FFF
    if chunk == b"VP8L":
        b = data[21:25]
        bits = int.from_bytes(b, "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None


def _jpeg(data: bytes) -> tuple[int, int] | None:
    """Walk the JPEG segments (each hop skips a whole segment, so this is linear and bounded) to the frame
    header, which holds the size."""
    if data[:2] != b"\xff\xd8":
        return None
    i = 2
    n = len(data)
    while i + 9 < n:
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return int(w), int(h)
        if length < 2:
            return None
        i += 2 + length
    return None


def _decode_data_url(url: str) -> bytes | None:
    """The first bytes of a base64 ``data:`` URL, decoded (only what the header needs)."""
    if not url.startswith("data:"):
        return None
    comma = url.find(",", 0, 256)
    if comma < 0 or ";base64" not in url[:comma]:
        return None
    chunk = url[comma + 1 : comma + 1 + _HEADER_BYTES * 4 // 3]
    chunk = chunk[: len(chunk) // 4 * 4]
    try:
        return base64.b64decode(chunk, validate=False)
    except (binascii.Error, ValueError):
        return None


def image_size(image: Image) -> tuple[int, int] | None:
    """The pixel size from the image's header, or None when it cannot be read (remote URL, unknown format)."""
    data = image.data
    if data is None and image.url is not None:
        data = _decode_data_url(image.url)
    if not data:
        return None
    head = data[:_HEADER_BYTES]
    for reader in (_png, _jpeg, _gif, _webp):
        try:
            size = reader(head)
        except (struct.error, IndexError):
            size = None
        if size is not None and size[0] > 0 and size[1] > 0:
            return size
    return None


def image_tokens(image: Image) -> int:
    """What the provider will bill for this image (see the module docstring)."""
    return pixel_tokens(*(image_size(image) or DEFAULT_IMAGE_SIZE))


def file_tokens(file: File, count_text: Callable[[str], int]) -> int:
    """A file's bill: text files are their text; PDFs a fixed cost per page; other binaries and remote files
    a flat one-page estimate (providers either reject them or convert them to text of unknown length).
    """
    data = file.data
    media = (file.media_type or "").lower()
    if data is not None:
        if media.startswith("text/") or media in ("application/json", "application/xml", "application/x-yaml"):
            return count_text(data.decode("utf-8", "replace"))
        if media == "application/pdf" or data[:5] == b"%PDF-":
            pages = data.count(b"/Type /Page") + data.count(b"/Type/Page")
            pages -= data.count(b"/Type /Pages") + data.count(b"/Type/Pages")
            return _PDF_PAGE_TOKENS * max(1, pages)
    return _PDF_PAGE_TOKENS
