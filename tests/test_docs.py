"""The README and the docs site hold together: their shell examples run, their links resolve, the front door stays
short, and the tables generated from the code cover the code.

Shell examples: every line of a ```` ```bash ```` block in README.md or docs/ that runs ``chainsum`` (``uv run
chainsum ...``, ``chainsum ...``, or the quick start's ``uv sync && uv run chainsum ...``) is run with the
installed ``chainsum`` in a temporary directory holding a copy of ``examples/``. It must exit 0, or the code its
comment documents (``# exit 1: why``). The lines of a block run in order in one directory, so a line may read what
an earlier one wrote (``replay --db archive.db``, then ``search --db archive.db``); a line an earlier block already
ran is not run again. A line is skipped, with the reason, when it
needs what a test run does not have: a long-running server (``serve``), a model or an API key (``--summarizer``
other than ``extractive``, ``*_API_KEY=``), a network endpoint (``--base-url``, a URL), a value from an earlier
run written as a placeholder (``SUMMARY_ID``), or an input file chainsum does not ship (``session.json``).
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from chainsum.manager import ENV_VARS

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
BIN = Path(sys.executable).parent  # the environment running the tests, where `chainsum` is installed

COMMANDS_READING_A_FILE = {"inspect", "validate", "repair", "convert", "compact", "replay"}
OUTPUT_OPTIONS = {"-o", "--output", "--report", "--plot"}
EXIT = re.compile(r"#\s*exit (\d+)\b")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*[A-Z0-9]$")


@dataclass(frozen=True)
class Example:
    page: str
    line: int
    block: int
    text: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def examples() -> list[Example]:
    found: list[Example] = []
    for page in PAGES:
        in_bash, block = False, 0
        for number, raw in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
            stripped = raw.strip()
            if stripped.startswith("```"):
                in_bash = not in_bash and stripped == "```bash"
                block += in_bash
                continue
            if in_bash and command_of(stripped) is not None:
                found.append(Example(str(page.relative_to(ROOT)), number, block, stripped))
    return found


def command_of(line: str) -> list[str] | None:
    """The line's words from ``chainsum`` on (environment assignments dropped), or None when it runs no chainsum."""
    line = line.removeprefix("uv sync && ")
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return None
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words = words[1:]
    if words[:2] == ["uv", "run"]:
        words = words[2:]
    return words if words[:1] == ["chainsum"] else None


def files(words: list[str]) -> tuple[set[str], set[str]]:
    """(inputs, outputs): the files a command line reads and writes, as written."""
    inputs: set[str] = set()
    outputs: set[str] = set()
    command = words[1] if len(words) > 1 else ""
    positional = [
        w for i, w in enumerate(words[2:], start=2) if not w.startswith("-") and w != "<" and not takes(words[i - 1])
    ]
    if command in COMMANDS_READING_A_FILE and positional and positional[0] != "-":
        inputs.add(positional[0])
    for option, value in itertools.pairwise(words):
        if option in OUTPUT_OPTIONS or (option == "--db" and command == "replay"):
            outputs.add(value)
        elif option == "--db" or option == "<":
            inputs.add(value)
    return inputs, outputs


def takes(word: str) -> bool:
    """Whether `word` is an option followed by its value (every option here but the flags)."""
    flags = {
        "--json",
        "--dry-run",
        "--repair",
        "--clear-reasoning",
        "--insecure",
        "--help",
        "--version",
        "-v",
        "--verbose",
    }
    return (word.startswith("-") and word not in flags) or word == "<"


def skip_reason(example: Example, produced: set[str]) -> str | None:
    words = command_of(example.text) or []
    args = words[1:]
    if args[:1] == ["serve"]:
        return "starts a long-running server"
    if re.search(r"\b[A-Z_]*API_KEY=", example.text):
        return "needs an API key"
    summarizer = next((v for o, v in itertools.pairwise(args) if o == "--summarizer"), "extractive")
    if summarizer != "extractive":
        return f"needs a model ({summarizer})"
    if "--base-url" in args or any(re.match(r"^https?://", a) for a in args):
        return "needs a network endpoint"
    placeholders = [a for a in args[1:] if PLACEHOLDER.match(a)]
    if placeholders:
        return f"needs a value from an earlier run ({placeholders[0]})"
    inputs, _ = files(words)
    shipped = {str(p.relative_to(ROOT)) for p in (ROOT / "examples").iterdir()}
    missing = sorted(f for f in inputs if f not in shipped and f not in produced)
    if missing:
        return f"needs {missing[0]}, which chainsum does not ship"
    return None


def cases() -> list[object]:
    """One case per block with lines to run (its lines in order, in one directory), and one skipped case per line
    that cannot run, with its reason. A line already run by an earlier block is not run again."""
    params: list[object] = []
    seen: set[str] = set()
    blocks: dict[tuple[str, int], list[Example]] = {}
    for example in examples():
        blocks.setdefault((example.page, example.block), []).append(example)
    for lines in blocks.values():
        runnable: list[Example] = []
        produced: set[str] = set()
        for example in lines:
            reason = skip_reason(example, produced)
            if reason:
                params.append(pytest.param([example], id=example.id, marks=[pytest.mark.skip(reason=reason)]))
                continue
            produced |= files(command_of(example.text) or [])[1]
            if example.text not in seen:
                runnable.append(example)
            seen.add(example.text)
        if runnable:
            params.append(pytest.param(runnable, id=runnable[0].id))
    return params


def run(example: Example, cwd: Path) -> subprocess.CompletedProcess[str]:
    line = example.text.removeprefix("uv sync && ")  # the test environment is already synced
    line = re.sub(r"(^|\s)uv run chainsum\b", r"\1chainsum", line)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "120"}
    env = {k: v for k, v in env.items() if not k.startswith(("SUMMARIZATION_", "CHAINSUM_"))}
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("block", cases())
@pytest.mark.slow
def test_shell_examples_run(block: list[Example], tmp_path: Path) -> None:
    """The lines of one block, in order, in one directory holding a copy of ``examples/``."""
    assert shutil.which("chainsum", path=str(BIN)), f"chainsum is not installed in {BIN}"
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    for example in block:
        done = run(example, tmp_path)
        assert done.returncode == expected_exit(example), f"{example.id}: {example.text}\n{done.stderr[-2000:]}"


def expected_exit(example: Example) -> int:
    found = EXIT.search(example.text)
    return int(found.group(1)) if found else 0


def test_the_examples_are_found() -> None:
    """The extraction sees the quick start (a regression here would make every example test vanish silently)."""
    found = {e.text for e in examples()}
    assert "uv sync && uv run chainsum compact examples/support-session.json --budget 800 --report report.json" in found
    runnable = [line for case in cases() if not getattr(case, "marks", ()) for line in getattr(case, "values", ())[0]]
    assert len(runnable) >= 5


# the front door ---------------------------------------------------------------------------------------------------
def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; the details belong in docs/"


def test_readme_keeps_the_quick_start() -> None:
    text = README.read_text(encoding="utf-8")
    assert "uv sync && uv run chainsum compact examples/support-session.json --budget 800 --report report.json" in text
    assert "\nuv run pytest\n" in text


def relative_links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    return [link for link in links if not re.match(r"^[a-z]+:", link) and not link.startswith("#")]


def test_every_file_the_readme_links_exists() -> None:
    links = relative_links(README)
    assert any(link.startswith("docs/") for link in links), "the README links no docs page"
    for link in links:
        assert (ROOT / link.split("#")[0]).exists(), link


def nav_pages(nav: object) -> set[str]:
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, list):
        return set().union(*(nav_pages(item) for item in nav))
    if isinstance(nav, dict):
        return set().union(*(nav_pages(item) for item in nav.values()))
    return set()


def test_every_docs_page_is_in_the_nav() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert nav_pages(config["nav"]) == pages


# the generated reference ------------------------------------------------------------------------------------------
def hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("chainsum_docs_hooks", DOCS / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_markers_are_on_their_pages() -> None:
    text = {p.name: p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md")}
    assert "<!-- chainsum:manager-env -->" in text["configuration.md"]
    assert "<!-- chainsum:server-env -->" in text["configuration.md"]
    assert "<!-- chainsum:layers -->" in text["design.md"]
    assert "<!-- chainsum:exports -->" in text["chainsum.md"]


def test_the_configuration_table_has_every_variable_with_its_default() -> None:
    rows = {
        line.split("|")[1].strip().strip("`"): [c.strip() for c in line.split("|")]
        for line in hooks().manager_env_table().splitlines()
        if line.startswith("| `SUMM")
    }
    assert set(rows) == {v.name for v in ENV_VARS}
    for var in ENV_VARS:
        assert rows[var.name][2] == var.type, var.name
        assert rows[var.name][3] == (f"`{var.default}`" if var.default else "unset"), var.name


def test_the_server_table_has_every_variable() -> None:
    from chainsum.server import VARIABLES

    table = hooks().server_env_table()
    for variable in VARIABLES.values():
        assert f"`{variable}`" in table


def test_the_server_tables_have_every_option_and_variable() -> None:
    """The configuration page's table (generated) and the README's (written by hand) name every option of
    ``chainsum serve`` and every ``CHAINSUM_*`` variable it reads."""
    from chainsum.server import VARIABLES

    options = hooks().serve_options()
    assert {"--upstream-timeout", "--session-idle-timeout", "--log-level"} <= set(options)
    table = hooks().server_env_table()
    readme = README.read_text(encoding="utf-8")
    for name in [*options, *VARIABLES.values()]:
        assert f"`{name}`" in table, name
        assert f"`{name}`" in readme, f"README.md's table of server settings lacks {name}"


def test_the_layers_table_lists_every_package() -> None:
    packages = {p.name for p in (ROOT / "src" / "chainsum").iterdir() if (p / "__init__.py").is_file()}
    table = hooks().layers_table()
    for name in packages:
        assert f"`chainsum.{name}`" in table
    assert len(packages) >= 14


def test_the_benchmarks_page_names_every_benchmark() -> None:
    text = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    for script in sorted((ROOT / "bench").glob("bench_*.py")):
        assert f"bench/{script.name}" in text, script.name
