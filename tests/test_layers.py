"""Layering, read from the source with `ast`: no module outside a package imports that package's private modules
(``chainsum.manager._recall``, ``from ..manager._build import ...``), so each package's ``__init__`` and its
``__all__`` are the whole of what other layers may use, and a private module can be split or renamed without
breaking them (issue 23: the integrations, the proxy and the CLI imported the manager's internals).

The manager is held to it everywhere: the library, the benchmarks, the examples and the tests of other layers (the
manager's own tests, under ``tests/manager``, may test its private modules). For the other packages the check
covers the library, with the imports it still finds listed in `KNOWN` (to be removed, not added to)."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

KNOWN = {
    ("chainsum/integrations/_summarizer.py", "chainsum.summarize.llm._common"),
    ("chainsum/integrations/langchain.py", "chainsum.formats._base"),
    ("chainsum/integrations/pydantic_ai.py", "chainsum.formats._base"),
    ("chainsum/server/_hub.py", "chainsum.store._directory"),
    ("chainsum/testing/langchain.py", "chainsum.integrations._common"),
    ("chainsum/testing/scripted.py", "chainsum.summarize._transcript"),
}
"""(file under ``src``, private module) pairs outside the manager found when this test was written."""

Package = tuple[str, ...] | None
"""The dotted package a file belongs to (``("chainsum", "server")``), None for a file outside the library."""


def _imported(path: Path, package: Package) -> Iterator[tuple[int, tuple[str, ...]]]:
    """(line, dotted name) of every import in `path`, at any depth (a lazy import in a function too): the module of
    ``from x import y``, and ``x.y`` (which may be a module, as in ``from chainsum.manager import _codec``).
    Relative imports are resolved against `package` (a file outside the library has none of chainsum)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, tuple(alias.name.split("."))
        elif isinstance(node, ast.ImportFrom):
            if node.level and package is None:
                continue
            base = package[: len(package) - node.level + 1] if node.level and package else ()
            module = base + tuple(node.module.split(".") if node.module else ())
            yield node.lineno, module
            for alias in node.names:
                yield node.lineno, (*module, alias.name)


def _private_module(dotted: tuple[str, ...]) -> tuple[str, ...] | None:
    """The private module of chainsum that `dotted` reaches into (``chainsum.manager._recall`` for
    ``chainsum.manager._recall.is_recall_message``), or None when it reaches none."""
    if dotted[:1] != ("chainsum",):
        return None
    for k, part in enumerate(dotted[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return dotted[: k + 1]
    return None


def _offenders(files: Mapping[Path, Package], base: Path) -> list[tuple[str, int, str]]:
    """(file relative to `base`, line, private module) for each import of a private module of a package the file is
    not in (a package's own private modules, and those of the packages above it, are its own to use)."""
    found: set[tuple[str, int, str]] = set()
    for path, own in files.items():
        for line, dotted in _imported(path, own):
            private = _private_module(dotted)
            if private is None or (own is not None and own[: len(private) - 1] == private[:-1]):
                continue
            found.add((path.relative_to(base).as_posix(), line, ".".join(private)))
    return sorted(found)


def _library() -> dict[Path, Package]:
    return {p: p.relative_to(SRC).parent.parts for p in sorted((SRC / "chainsum").rglob("*.py"))}


def test_nothing_outside_the_manager_imports_its_private_modules() -> None:
    files = {p: own for p, own in _library().items() if own is None or own[:2] != ("chainsum", "manager")}
    outside: dict[Path, Package] = {}
    for folder in ("bench", "examples", "tests"):
        outside.update({p: None for p in sorted((ROOT / folder).rglob("*.py")) if "node_modules" not in p.parts})
    outside = {p: own for p, own in outside.items() if ROOT / "tests" / "manager" not in p.parents}
    offenders = [
        o for o in [*_offenders(files, SRC), *_offenders(outside, ROOT)] if o[2].startswith("chainsum.manager.")
    ]
    assert offenders == [], "import these from chainsum.manager (export them there first): " + "; ".join(
        f"{file}:{line} {module}" for file, line, module in offenders
    )


def test_no_new_import_of_another_packages_private_module() -> None:
    found = {(file, module) for file, _, module in _offenders(_library(), SRC)}
    new = sorted(found - KNOWN)
    assert new == [], "import these from their package's public names: " + "; ".join(f"{f} {m}" for f, m in new)
    assert sorted(KNOWN - found) == [], "no longer imported: remove these from KNOWN"


def test_the_check_finds_each_kind_of_private_import(tmp_path: Path) -> None:
    """The check itself, on a small tree: absolute, ``from`` and lazy imports of a private module are found, a
    relative one is resolved against the file's package, and a package's own private modules are allowed."""
    server = tmp_path / "chainsum" / "server"
    server.mkdir(parents=True)
    (server / "_views.py").write_text(
        "from ..manager._build import has_summary_text\n"
        "from ..manager import _codec, ContextManager\n"
        "from ._models import Model\n"
        "from .. import _sync\n"
        "def later():\n    import chainsum.manager._recall\n",
        encoding="utf-8",
    )
    (tmp_path / "bench.py").write_text(
        "from chainsum.manager._replay import request_indices\nfrom chainsum.manager import ContextManager\n",
        encoding="utf-8",
    )
    files: dict[Path, Package] = {server / "_views.py": ("chainsum", "server"), tmp_path / "bench.py": None}
    assert _offenders(files, tmp_path) == [
        ("bench.py", 1, "chainsum.manager._replay"),
        ("chainsum/server/_views.py", 1, "chainsum.manager._build"),
        ("chainsum/server/_views.py", 2, "chainsum.manager._codec"),
        ("chainsum/server/_views.py", 6, "chainsum.manager._recall"),
    ]
