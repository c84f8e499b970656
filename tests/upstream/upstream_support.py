"""Run a framework's own test files against chainsum's adapter: the check an adopter makes of a drop-in replacement.

Each framework's folder (``tests/upstream/<framework>/``) holds a *shim*: a ``conftest.py`` that puts chainsum's class
where the framework's tests import the class it replaces, and supplies the fixtures of the framework's own conftest
that the chosen files use (that conftest is not copied: it pulls in services and plugins the files do not need). The
test files themselves are copied unedited from the framework's sdist, at the version ``uv.lock`` pins, so every
assertion is the framework's.

A test of the framework's that chainsum fails for a reason that is the algorithm's, not the contract's (it asserts
the exact message a different algorithm cuts at, say), is listed in the framework's ``KNOWN`` table with why; the
shim marks it ``xfail(strict=True)``, so a listed test that starts passing fails the run too and the table stays
true. Everything else must pass. ``docs/integrations.md`` shows the same tables (``tests/upstream/test_tables.py``).

The sdist is fetched with pip (``pip download --no-deps --no-binary :all:``), from the package registry, into
``$CHAINSUM_UPSTREAM_CACHE`` (default ``~/.cache/chainsum/upstream``): the profile needs the registry once per
version, nothing else.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import xml.etree.ElementTree as ElementTree
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Outcome", "SuiteRun", "fetch_sdist", "locked_version", "run_suite"]

ROOT = Path(__file__).resolve().parents[2]
"""The checkout: where ``uv.lock`` is."""


def locked_version(package: str) -> str:
    """The version of `package` that ``uv.lock`` pins: the one the adapters are tested against."""
    lock = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))
    for entry in lock["package"]:
        if entry["name"] == package:
            return str(entry["version"])
    raise LookupError(f"uv.lock pins no {package}")


def _cache() -> Path:
    configured = os.environ.get("CHAINSUM_UPSTREAM_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "chainsum" / "upstream"


def _pip() -> list[str]:
    """A pip to download with: this interpreter's, else the machine's ``python3``'s, else uv's ``uvx pip``."""
    candidates = [[sys.executable, "-m", "pip"], ["python3", "-m", "pip"]]
    for candidate in candidates:
        probe = subprocess.run([*candidate, "--version"], capture_output=True, check=False)
        if probe.returncode == 0:
            return candidate
    return ["uvx", "pip"]


def fetch_sdist(package: str, version: str) -> Path:
    """The unpacked sdist of `package` `version` (downloaded once into the cache): the folder holding its
    ``pyproject.toml`` and its ``tests/``."""
    cache = _cache()
    unpacked = cache / f"{package}-{version}"
    if (unpacked / ".complete").exists():
        return next(p for p in unpacked.iterdir() if p.is_dir())
    downloads = cache / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    command = [*_pip(), "download", "--no-deps", "--no-binary", ":all:", f"{package}=={version}", "-d", str(downloads)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"pip download {package}=={version} failed: {done.stderr.strip().splitlines()[-1:]}")
    stem = package.replace("-", "_").lower()
    archive = next(
        p for p in downloads.iterdir() if p.name.lower().replace("-", "_").startswith(f"{stem}_{version}".lower())
    )
    shutil.rmtree(unpacked, ignore_errors=True)
    unpacked.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(unpacked, filter="data")
    (unpacked / ".complete").touch()
    return next(p for p in unpacked.iterdir() if p.is_dir())


@dataclass(frozen=True)
class Outcome:
    """One test of the framework's: its node id and what happened (passed, failed, xfailed, skipped, error)."""

    nodeid: str
    result: str
    message: str = ""


@dataclass(frozen=True)
class SuiteRun:
    """A run of a framework's files: each test's outcome, and pytest's exit status and output tail."""

    outcomes: tuple[Outcome, ...]
    returncode: int
    output: str

    def counts(self) -> Counter[str]:
        return Counter(o.result for o in self.outcomes)

    def summary(self) -> str:
        counts = self.counts()
        return ", ".join(f"{counts[k]} {k}" for k in sorted(counts))

    def unexpected(self) -> list[Outcome]:
        """What fails the profile: any outcome but passed or a listed (xfailed) failure."""
        return [o for o in self.outcomes if o.result not in {"passed", "xfailed"}]


def _outcomes(junit: Path) -> tuple[Outcome, ...]:
    tree = ElementTree.parse(junit)
    found: list[Outcome] = []
    for case in tree.iter("testcase"):
        nodeid = f"{case.get('classname', '')}::{case.get('name', '')}"
        result, message = "passed", ""
        for child in case:
            if child.tag in {"failure", "error"}:
                result, message = ("failed" if child.tag == "failure" else "error"), child.get("message", "")
            elif child.tag == "skipped":
                kind = child.get("type", "")
                result = "xfailed" if kind == "pytest.xfail" else "skipped"
                message = child.get("message", "")
        found.append(Outcome(nodeid, result, message))
    return tuple(found)


def run_suite(
    sdist: Path,
    copy: Iterable[str],
    shim: Path,
    work: Path,
    *,
    ini: Mapping[str, str],
    select: Iterable[str] = (),
    timeout_s: float = 900,
) -> SuiteRun:
    """Copy `copy` (paths relative to `sdist`: the test files and the helper modules they import, parents'
    ``__init__.py`` included) into `work`, put the shim's ``conftest.py`` at the root of the copied ``tests``
    package, and run pytest there in a fresh process with its own ini (`ini`'s settings), `select` naming the files
    (default: every copied ``test_*.py``)."""
    for relative in copy:
        source = sdist / relative
        target = work / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            shutil.copy2(source, target)
        for parent in Path(relative).parents:
            init = sdist / parent / "__init__.py"
            if parent != Path(".") and init.exists() and not (work / parent / "__init__.py").exists():
                shutil.copy2(init, work / parent / "__init__.py")
    for conftest in work.rglob("conftest.py"):
        conftest.unlink()  # the framework's own conftests are replaced by the shim (see the module docstring)
    shutil.copy2(shim / "conftest.py", work / "tests" / "conftest.py")
    for helper in shim.glob("shim_*.py"):
        shutil.copy2(helper, work / "tests" / helper.name)
    settings = "\n".join(f"{k} = {v}" for k, v in ini.items())
    (work / "pytest.ini").write_text(f"[pytest]\n{settings}\n", encoding="utf-8")
    files = list(select) or sorted(str(p.relative_to(work)) for p in work.rglob("test_*.py"))
    junit = work / "junit.xml"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-c", "pytest.ini"]
    command += ["--rootdir", str(work), f"--junitxml={junit}", "-q", "-rfE", *files]
    env = {**os.environ, "PYTHONPATH": str(work)}
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=timeout_s, check=False)
    output = (done.stdout + done.stderr)[-20000:]
    if not junit.exists():
        raise RuntimeError(f"the framework's suite did not run (exit {done.returncode}):\n{output}")
    return SuiteRun(_outcomes(junit), done.returncode, output)
