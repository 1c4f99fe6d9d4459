"""What an ingest reports: an :class:`IngestResult` per source, and the progress callback."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class IngestResult:
    """What one ingested source became: ``status`` is ingested, replaced or unchanged."""

    kind: str
    name: str
    source: str
    status: str
    lines: int
    note: str | None = None  # what else the ingest did, said on a line of its own

    def message(self) -> str:
        """A one-line human summary."""
        if self.status == "unchanged":
            return f"{self.kind} {self.name!r} from {self.source}: already ingested, unchanged"
        said = f"{self.kind} {self.name!r} from {self.source}: {self.status} ({self.lines:,} lines)"
        return f"{said}\n  {self.note}" if self.note else said
