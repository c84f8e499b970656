"""MkDocs hook: the reference tables that must not drift from the code are built from it at every build.

A page asks for a table with a marker on a line of its own; the hook replaces the marker with a Markdown table made
by importing the objects the code itself uses:

- ``<!-- chainsum:manager-env -->``: every ``SUMMARIZATION_*`` variable, from `chainsum.manager.ENV_VARS` (the same
  tuple `ManagerConfig.from_env` parses with);
- ``<!-- chainsum:server-env -->``: every ``CHAINSUM_*`` variable of ``chainsum serve``, from
  `chainsum.server.VARIABLES` and the fields of `chainsum.server.ServerSettings` (defaults and field docstrings);
- ``<!-- chainsum:layers -->``: every package under ``src/chainsum``, lowest layer first, with the chainsum
  packages it imports (read from the source) and its docstring's first paragraph;
- ``<!-- chainsum:exports -->``: the names ``import chainsum`` gives, from ``chainsum.__all__``, each linked to its
  layer's API page.

A marker left in a page after the build (a typo, a table that could not be built) fails the build.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import itertools
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

MARKER = "<!-- chainsum:{} -->"


def _cell(text: str) -> str:
    """One table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def manager_env_table() -> str:
    """The ``SUMMARIZATION_*`` variables, in the order of `chainsum.manager.ENV_VARS`."""
    from chainsum.manager import ENV_VARS

    rows = [
        [f"`{v.name}`", v.type, f"`{v.default}`" if v.default else "unset", v.allowed, v.description] for v in ENV_VARS
    ]
    return _table(["Variable", "Type", "Default", "Allowed", "Description"], rows)


def _field_docstrings(cls: type) -> dict[str, str]:
    """The docstring written under each field of a dataclass (``x: int = 1`` then ``\"\"\"...\"\"\"``)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    cls_node = tree.body[0]
    assert isinstance(cls_node, ast.ClassDef), cls
    docs: dict[str, str] = {}
    for node, after in itertools.pairwise(cls_node.body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs


def _shown(default: object) -> str:
    if default is None or default is dataclasses.MISSING:
        return "unset"
    if isinstance(default, int) and not isinstance(default, bool) and default >= 1 << 20 and default % (1 << 20) == 0:
        return f"`{default}` ({default >> 20} MiB)"
    return f"`{default}`"


def serve_options() -> dict[str, str]:
    """Every option of ``chainsum serve`` (its flag) and the `chainsum.server.ServerSettings` field it sets (""
    for none): the field the variable named in its help sets (``Env: CHAINSUM_...``), else the field of the
    parameter's name."""
    import re
    import typing

    from chainsum.cli._serve import serve_cmd
    from chainsum.manager import ENV_VARS
    from chainsum.server import VARIABLES, ServerSettings

    by_variable = {v: k for k, v in VARIABLES.items()} | {v.name: v.field for v in ENV_VARS}
    fields = {f.name for f in dataclasses.fields(ServerSettings)}
    options: dict[str, str] = {}
    for name, hint in typing.get_type_hints(serve_cmd, include_extras=True).items():
        for meta in getattr(hint, "__metadata__", ()):
            # typer.Option("--flag", ...) inside Annotated keeps its first name as the `default`
            first = getattr(meta, "default", None)
            decls = [d for d in (first, *(getattr(meta, "param_decls", None) or ())) if isinstance(d, str)]
            decls = [d for d in decls if d.startswith("-")]
            if not decls:
                continue
            named = re.findall(r"\b(?:CHAINSUM|SUMMARIZATION)_[A-Z_]+\b", str(getattr(meta, "help", "") or ""))
            field = next((by_variable[v] for v in named if v in by_variable), name if name in fields else "")
            options[decls[0]] = field
    return options


def server_env_table() -> str:
    """Every `chainsum.server.ServerSettings` field, with the ``chainsum serve`` option that sets it and its
    ``CHAINSUM_*`` variable (`chainsum.server.VARIABLES`) or, for the context window, its ``SUMMARIZATION_*``
    one; then the options that set no field. The manager's thresholds are in their own table."""
    from chainsum.manager import ENV_VARS
    from chainsum.server import VARIABLES, ServerSettings

    manager_vars = {v.field: v.name for v in ENV_VARS}
    flags = {field: flag for flag, field in serve_options().items() if field}
    docs = _field_docstrings(ServerSettings)
    rows: list[list[str]] = []
    for field in dataclasses.fields(ServerSettings):
        if field.name == "config":
            continue  # the ManagerConfig: the SUMMARIZATION_* table
        variable = VARIABLES.get(field.name) or manager_vars.get(field.name)
        rows.append(
            [
                f"`{field.name}`",
                f"`{flags[field.name]}`" if field.name in flags else "none",
                f"`{variable}`" if variable else "none",
                _shown(field.default),
                docs.get(field.name, ""),
            ]
        )
    for flag, field in serve_options().items():
        if not field:
            rows.append(["none", f"`{flag}`", "none", "", "an option of the command alone"])
    return _table(["`ServerSettings` field", "Option", "Variable", "Default", "Description"], rows)


def exports_table() -> str:
    """``chainsum.__all__``: each name, what it is, and the layer that defines it (linked to its API page)."""
    import chainsum

    rows: list[list[str]] = []
    for name in chainsum.__all__:
        obj = getattr(chainsum, name)
        module = getattr(obj, "__module__", "chainsum")
        layer = ".".join(module.split(".")[:2])
        page = layer.split(".")[1] if "." in layer else "chainsum"
        kind = "class" if inspect.isclass(obj) else "function" if callable(obj) else "value"
        summary = (inspect.getdoc(obj) or "").split("\n\n")[0] if kind != "value" else ""
        link = f"[`{layer}`]({page}.md#{layer}.{name})"  # relative to reference/chainsum.md
        rows.append([f"`{name}`", kind, link, summary])
    return _table(["Name", "Kind", "Defined in", "What it is"], rows)


def _package_imports() -> dict[str, set[str]]:
    """Each package under ``src/chainsum`` and the other chainsum packages its modules import (read from the
    source, relative and absolute imports alike; lazy imports inside functions count too)."""
    import chainsum

    root = Path(chainsum.__file__).parent
    packages = sorted(p.name for p in root.iterdir() if (p / "__init__.py").is_file())
    imports: dict[str, set[str]] = {name: set() for name in packages}
    for name in packages:
        for path in (root / name).rglob("*.py"):
            here = path.relative_to(root).parts[:-1]  # the package path of the module
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                targets: list[tuple[str, ...]] = []
                if isinstance(node, ast.ImportFrom):
                    module = tuple(node.module.split(".")) if node.module else ()
                    if node.level:
                        targets.append(here[: len(here) - (node.level - 1)] + module)
                    elif module[:1] == ("chainsum",):
                        targets.append(module[1:])
                elif isinstance(node, ast.Import):
                    targets += [tuple(a.name.split("."))[1:] for a in node.names if a.name.startswith("chainsum.")]
                imports[name].update(t[0] for t in targets if t and t[0] in imports and t[0] != name)
    return imports


def layers_table() -> str:
    """Every package under ``src/chainsum``, lowest layer first, with the packages it imports and the first
    paragraph of its docstring."""
    imports = _package_imports()
    depth: dict[str, int] = {}

    def level(name: str) -> int:
        if name not in depth:
            depth[name] = 1 + max((level(d) for d in imports[name]), default=0)
        return depth[name]

    rows: list[list[str]] = []
    for name in sorted(imports, key=lambda n: (level(n), n)):
        module = importlib.import_module(f"chainsum.{name}")
        summary = (inspect.getdoc(module) or "").split("\n\n")[0]
        uses = ", ".join(f"`{d}`" for d in sorted(imports[name], key=lambda d: (level(d), d))) or "(none)"
        page = "cli.md" if name == "cli" else f"reference/{name}.md"  # the CLI's reference is its --help
        rows.append([f"[`chainsum.{name}`]({page})", uses, summary])
    return _table(["package", "imports (chainsum packages)", "what it holds"], rows)


TABLES: dict[str, Callable[[], str]] = {
    "manager-env": manager_env_table,
    "server-env": server_env_table,
    "exports": exports_table,
    "layers": layers_table,
}


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    for name, build in TABLES.items():
        marker = MARKER.format(name)
        if marker in markdown:
            markdown = markdown.replace(marker, build())
    if "<!-- chainsum:" in markdown:
        raise ValueError(f"{kwargs['page'].file.src_uri}: unknown chainsum table marker")
    return markdown
