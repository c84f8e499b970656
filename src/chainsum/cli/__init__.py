"""The ``chainsum`` command line. Needs the ``cli`` extra (typer, rich); says so when it is missing."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Entry point of the ``chainsum`` console script."""
    try:
        from ._app import app
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        print(f'chainsum: the CLI needs {exc.name}; install it with: pip install "chainsum[cli]"', file=sys.stderr)
        raise SystemExit(2) from None
    app()
