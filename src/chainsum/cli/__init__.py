"""The ``chainsum`` command line. typer and rich are core dependencies; a broken install still gets one line."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Entry point of the ``chainsum`` console script."""
    try:
        from ._app import app
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        print(
            f"chainsum: the CLI needs {exc.name}, a dependency of chainsum; reinstall it: pip install chainsum",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
    app()
