"""The README documents every configuration variable, with the default the code uses."""

from __future__ import annotations

from pathlib import Path

from chainsum.manager import ENV_VARS

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_every_variable_is_in_the_readme_table() -> None:
    rows = {line.split("|")[1].strip().strip("`"): line for line in README.splitlines() if line.startswith("| `SUMM")}
    assert set(rows) == {v.name for v in ENV_VARS}
    for var in ENV_VARS:
        cells = [c.strip() for c in rows[var.name].split("|")]
        assert cells[2] == var.type, var.name
        assert cells[3] == (f"`{var.default}`" if var.default else "unset"), var.name
