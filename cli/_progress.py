"""A progress bar on a terminal only (never in pipes or CI)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


def interactive() -> bool:
    """True when stderr is a terminal and we are not in CI."""
    return sys.stderr.isatty() and not os.environ.get("CI")


@contextmanager
def progress_bar(description: str) -> Iterator[Callable[[int, int], None] | None]:
    """Yield a ``(done, total)`` callback that drives a rich bar, or None off a terminal."""
    if not interactive():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update
