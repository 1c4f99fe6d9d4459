"""The Warehouse's methods for excluded documents: a mixin, kept light to import (methods §17).

The work is :mod:`evalwh.store.ingest.exclusions`'s, imported when a method runs.

May import: :mod:`evalwh.store` (its ingest, on demand), as the rest of :mod:`evalwh.store`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store


class ExcludedDocuments:
    """The Warehouse's methods for excluded documents (``evalwh exclusions ...``; methods §17).

    A mixin of :class:`evalwh.warehouse.Warehouse` (which takes them in turns with its other
    jobs); each writing method is one transaction.
    """

    def add_exclusions(
        self, path: str | os.PathLike[str], *, collection: str | None = None, name: str | None = None,
        replace: bool = False,
    ) -> dict[str, object]:  # fmt: skip
        """Store an exclusion file (``topic docid`` a line) and remove its pairs from every run.

        ``evalwh exclusions add``. Returns ``status`` (added, replaced, unchanged), ``pairs``
        and ``runs`` (the runs whose lists changed).
        """
        from evalwh.store.ingest import exclusions as ex

        wh = self._store()
        wh.require_writer("add exclusions")
        collection = wh.default_collection(collection)
        with wh.transaction():
            status, pairs, changed = ex.add_file(wh, path, collection, name=name, replace=replace)
        return {"status": status, "pairs": pairs, "runs": changed}

    def exclude_identical_ids(self, on: bool = True, *, collection: str | None = None) -> list[str]:
        """Exclude (``on=False``: stop excluding) documents whose id equals their topic's id.

        BEIR's ArguAna and Quora convention (ir_datasets' ``ignore_identical_ids``); ``evalwh
        exclusions identical-ids``. Returns the runs whose lists changed.
        """
        from evalwh.store.ingest import exclusions as ex

        wh = self._store()
        wh.require_writer("exclude identical ids")
        collection = wh.default_collection(collection)
        with wh.transaction():
            return ex.set_identical_ids(wh, collection, on)

    def remove_exclusions(self, source: str, *, collection: str | None = None) -> list[str]:
        """Remove an exclusion file (by the name it was stored under) or the rule identical_ids.

        What it removed returns to the runs. ``evalwh exclusions remove``. Returns the runs
        whose lists changed.
        """
        from evalwh.store.ingest import exclusions as ex

        wh = self._store()
        wh.require_writer("remove exclusions")
        collection = wh.default_collection(collection)
        wh.require_collection(collection)
        with wh.transaction():
            return ex.remove_source(wh, collection, source)

    def exclusion_sources(self, *, collection: str | None = None) -> pd.DataFrame:
        """The collection's sources of exclusions (``evalwh exclusions show``)."""
        from evalwh.store.ingest import exclusions as ex

        wh = self._store()
        collection = wh.default_collection(collection)
        wh.require_collection(collection)
        return ex.sources(wh, collection)

    def exclusion_losses(
        self, *, collection: str | None = None, per_topic: bool = False, runs: list[str] | None = None
    ) -> pd.DataFrame:
        """What the exclusions removed from each run, per topic on request (``evalwh exclusions losses``).

        See :func:`evalwh.store.ingest.exclusions.losses`.
        """
        from evalwh.store.ingest import exclusions as ex

        wh = self._store()
        collection = wh.default_collection(collection)
        wh.require_collection(collection)
        return ex.losses(wh, collection, per_topic=per_topic, runs=runs)

    def _store(self) -> Store:
        return self  # type: ignore[return-value]
