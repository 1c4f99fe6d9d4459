"""The ir_metadata blocks of run files, stored with their runs (``run_ir_metadata``).

:func:`read_blocks` reads each file's block (:mod:`evalwh.io.ir_metadata`) before anything is
stored, so a malformed block rejects the ingest as a bad line does; :func:`store_blocks`
keeps the block of every run the ingest stored or replaced (schema/020_external_sources.sql;
the view ``run_ir_metadata_fields`` shows its main fields as columns).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalwh.errors import IngestError
from evalwh.io import ir_metadata
from evalwh.store.ingest.files import READ_ERRORS

if TYPE_CHECKING:
    from evalwh.store.connection import Store
    from evalwh.store.ingest.files import RunFile
    from evalwh.store.ingest.results import IngestResult


def read_blocks(files: list[RunFile]) -> dict[str, ir_metadata.Block]:
    """The block of each file that opens with one, by the file's label."""
    blocks = {}
    for file in files:
        try:
            block = ir_metadata.read_block(file.readable, file.label)
        except READ_ERRORS as error:
            raise IngestError(file.label, None, f"cannot read the file: {error}") from None
        if block is not None:
            blocks[file.label] = block
    return blocks


def store_blocks(
    wh: Store, collection: str, results: list[IngestResult], blocks: dict[str, ir_metadata.Block]
) -> None:
    """Keep the blocks of the runs ingested or replaced (a replaced run loses its old one)."""
    for result in results:
        if result.status not in ("ingested", "replaced"):
            continue
        wh.con.execute(
            "DELETE FROM run_ir_metadata WHERE collection_id = ? AND run_id = ?",
            [collection, result.name],
        )
        block = blocks.get(result.source)
        if block is not None:
            wh.con.execute(
                "INSERT INTO run_ir_metadata VALUES (?, ?, ?, ?)",
                [collection, result.name, block.to_json(), block.lines],
            )
