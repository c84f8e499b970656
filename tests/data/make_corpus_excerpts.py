"""Rebuild ``tests/data/corpora`` from the shared corpora: the few real conversations the always-on tests read.

The excerpts keep the corpora's folder layout and file names, so `chainsum.testing.iter_documents` reads them as it
reads the corpora, and each conversation keeps its label: a run left out of a list file is ``null`` there (the
reader skips it), so ``tau-bench/gpt-4o-airline.json#53`` is run 53 in both. What each test needs decides what is
kept; see ``tests/data/corpora/README.md``. Run it with the shared corpora beside the checkout:

    uv run python tests/data/make_corpus_excerpts.py
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from chainsum.formats import claude_code
from chainsum.testing import corpora_root

OUT = Path(__file__).parent / "corpora"

TAU_BENCH_RUNS = [*range(14), 53]
"""The first 14 runs (the agent integrations replay them) and run 53 (a manager invariant's regression)."""
TAU2_SIMULATIONS = [0, 1, 4, 10]
"""Simulations 4 and 10 (budget regressions), and 0 and 1 (user-side tool calls, parallel calls)."""
CLAUDE_CODE_SESSION = "258c7280-ae70-4798-800f-63464d01a85d"
CLAUDE_CODE_HEAD = 300
"""At most this many lines of the session's start (its first requests, tool calls and results), ending where every
tool call so far has its result."""
CLAUDE_CODE_AFTER_COMPACTION = 60
"""Lines kept from the session's own compaction boundary on (its summary and what the agent did next)."""
CLAUDE_CODE_SUBAGENT = "agent-acompact-fffbd0.jsonl"
"""The subagent that wrote the session's compaction summary (27 KB)."""
BFCL_FILES = ["memory_customer.json"]


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def _sparse(items: list[Any], keep: list[int]) -> list[Any]:
    return [item if i in keep else None for i, item in enumerate(items[: max(keep) + 1])]


def _answered_head(lines: list[str], most: int) -> int:
    """The largest line count up to `most` whose lines end with every tool call answered, so the excerpt's two
    parts join without an orphan."""
    for n in range(most, 0, -1):
        messages = claude_code.load([json.loads(line) for line in lines[:n]]).messages
        calls = {c.id for m in messages for c in m.tool_calls}
        if messages and calls == {r.call_id for m in messages for r in m.tool_results}:
            return n
    raise SystemExit("no prefix of the session answers all its tool calls")


def main() -> None:
    root = corpora_root()
    if root is None:
        raise SystemExit("the shared corpora are not beside the checkout (../shared/corpora)")
    for folder in ("tau-bench", "tau2-bench", "claude-code", "bfcl-memory"):
        (OUT / folder).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / folder / "LICENSE", OUT / folder / "LICENSE")

    runs = json.loads((root / "tau-bench" / "gpt-4o-airline.json").read_text(encoding="utf-8"))
    _write_json(OUT / "tau-bench" / "gpt-4o-airline.json", _sparse(runs, TAU_BENCH_RUNS))

    name = "gpt-4.1_telecom_default_gpt-4.1_1trials.json"
    doc = json.loads((root / "tau2-bench" / name).read_text(encoding="utf-8"))
    sims = doc["simulations"]
    task_ids = {sims[i]["task_id"] for i in TAU2_SIMULATIONS}
    doc["tasks"] = [t for t in doc["tasks"] if t["id"] in task_ids]
    doc["simulations"] = _sparse(sims, TAU2_SIMULATIONS)
    _write_json(OUT / "tau2-bench" / name, doc)

    lines = (root / "claude-code" / f"{CLAUDE_CODE_SESSION}.jsonl").read_text(encoding="utf-8").splitlines()
    boundary = next(i for i, line in enumerate(lines) if '"compact_boundary"' in line)
    subagent = root / "claude-code" / CLAUDE_CODE_SESSION / "subagents" / CLAUDE_CODE_SUBAGENT
    (OUT / "claude-code" / CLAUDE_CODE_SESSION / "subagents").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(subagent, OUT / "claude-code" / CLAUDE_CODE_SESSION / "subagents" / CLAUDE_CODE_SUBAGENT)
    head = _answered_head(lines, CLAUDE_CODE_HEAD)
    kept = lines[:head] + lines[boundary : boundary + CLAUDE_CODE_AFTER_COMPACTION]
    (OUT / "claude-code" / f"{CLAUDE_CODE_SESSION}.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")

    for file in BFCL_FILES:
        src = root / "bfcl-memory" / "memory_prereq_conversation" / file
        dst = OUT / "bfcl-memory" / "memory_prereq_conversation" / file
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    (OUT / "README.md").exists() or print("write tests/data/corpora/README.md (license and source of each excerpt)")


if __name__ == "__main__":
    main()
