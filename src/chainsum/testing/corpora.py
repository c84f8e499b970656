"""The shared real-conversation corpora, as raw documents ready for `chainsum.formats.load`.

The corpora live outside the project (``../shared/corpora`` next to the checkout, see its README). `corpora_root()`
finds them; `iter_documents()` yields each conversation with the format it is in, from them or from any folder laid
out the same way: the test suite ships such a folder of excerpts (``tests/data/corpora``), where a run left out of a
list file is ``null``, so every conversation keeps the label it has in the full corpus.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

__all__ = ["CorpusDocument", "corpora_root", "iter_documents"]


@dataclass(frozen=True, slots=True)
class CorpusDocument:
    label: str
    """Where it came from, e.g. ``tau-bench/gpt-4o-airline.json#17``."""
    format: str
    """The chainsum format name the raw data is in."""
    data: Any
    """Parsed JSON (a message list, or a list of JSONL records for Claude Code)."""
    size: int
    """Bytes of the JSON text it came from (for a file holding several conversations, that conversation's
    share, re-serialized)."""


def corpora_root() -> Path | None:
    """``$CHAINSUM_CORPORA``, else ``../shared/corpora`` relative to the project root or the working directory."""
    env = os.environ.get("CHAINSUM_CORPORA")
    candidates = [Path(env)] if env else []
    here = Path(__file__).resolve()
    candidates += [p / "shared" / "corpora" for p in here.parents]
    candidates += [Path.cwd().parent / "shared" / "corpora", Path.cwd() / "shared" / "corpora"]
    for c in candidates:
        if (c / "README.md").is_file():
            return c
    return None


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _sized(label: str, fmt: str, data: Any) -> CorpusDocument:
    return CorpusDocument(label, fmt, data, len(json.dumps(data)))


def iter_documents(root: Path | None = None, *, include_subagents: bool = True) -> Iterator[CorpusDocument]:
    """Every conversation of every corpus, in a stable order."""
    root = root or corpora_root()
    if root is None:
        return
    tau = root / "tau-bench" / "gpt-4o-airline.json"
    if tau.is_file():
        for i, run in enumerate(cast(list[dict[str, Any] | None], _json(tau))):
            if run is not None:
                yield _sized(f"tau-bench/{tau.name}#{i}", "openai", run["traj"])
    tau2_path = root / "tau2-bench" / "gpt-4.1_telecom_default_gpt-4.1_1trials.json"
    if tau2_path.is_file():
        doc = cast(dict[str, Any], _json(tau2_path))
        for i, sim in enumerate(cast(list[dict[str, Any] | None], doc["simulations"])):
            if sim is not None:
                yield _sized(f"tau2-bench/{tau2_path.name}#{i}", "tau2", sim["messages"])
    cc = root / "claude-code"
    if cc.is_dir():
        files = sorted(cc.glob("*.jsonl"))
        if include_subagents:
            files += sorted(cc.glob("*/subagents/*.jsonl"))
        for path in files:
            text = path.read_text(encoding="utf-8")
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
            yield CorpusDocument(f"claude-code/{path.relative_to(cc)}", "claude-code", records, len(text.encode()))
    bfcl = root / "bfcl-memory" / "memory_prereq_conversation"
    if bfcl.is_dir():
        for path in sorted(bfcl.glob("*.json")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
                if not line.strip():
                    continue
                entry = cast(dict[str, Any], json.loads(line))
                turns = [m for turn in cast(list[list[dict[str, Any]]], entry["question"]) for m in turn]
                yield _sized(f"bfcl-memory/{path.name}#{n}", "openai", turns)
