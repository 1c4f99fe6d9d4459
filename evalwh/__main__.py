"""The ``evalwh`` command (``python -m evalwh`` too): the CLI, with Ctrl-C during start-up handled.

The console script points here rather than at the typer app, so that an interrupt while the
CLI's modules are still importing ends like any other: one line on stderr and exit 130 (the
commands themselves handle it in ``evalwh.cli._errors``).
"""

from __future__ import annotations

import sys


def main() -> None:
    """Import the CLI and run it."""
    try:
        from evalwh.cli import app
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted; nothing was changed.\n")
        raise SystemExit(130) from None
    app()


if __name__ == "__main__":
    main()
