"""Run files on their way in: the first line sniffed, standard input spilled, the files scanned.

Step 1 of a run ingest (:mod:`evalwh.store.ingest`): :func:`prepare_run_files` checks the
file list and sniffs each file's first data line (its delimiter and tag, hence the run id);
standard input and pipes are first copied once to a temporary file (:class:`Spill`). A
:class:`RunFile` is one file on its way in; the :class:`Scanner` hashes (and decompresses)
files in worker threads, and :func:`group_batches` groups them by delimiter for DuckDB's CSV
reader. The direct evaluation (:mod:`evalwh.measures.direct`) prepares its files here too.
"""

from __future__ import annotations

import gzip
import os
import shutil
import tempfile
import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from evalwh.errors import IngestError
from evalwh.io import formats
from evalwh.io.printable import CONTROL

# About 64 MiB of text (1.5 M lines) per batch: enough files for DuckDB to read in parallel,
# and sorts and hash tables small enough to stay in cache. Measured on 2 cores: 25 M lines in
# about 23 s with 32-64 MiB batches against 34 s with 1 GiB ones; TREC-8 is indifferent.
_BATCH_BYTES = 64 << 20
GZIP_RATIO = 4  # a gzipped run file holds about four times its size in text
READ_ERRORS = (OSError, EOFError, zlib.error, gzip.BadGzipFile)


def _unreadable(path: Path, error: BaseException) -> IngestError:
    return IngestError(str(path), None, f"cannot read the file: {error}")


class Spill:
    """Temporary files of one ingest, under ``$TMPDIR/evalwh-ingest-PID-*``.

    Made only when needed (standard input, a pipe, a gzipped file the general path reads),
    deleted at the end. A killed ingest cannot delete its own, so the next one removes those
    of processes that no longer run.
    """

    PREFIX = "evalwh-ingest-"

    def __init__(self) -> None:
        self.folder: Path | None = None
        self.count = 0

    def new(self, suffix: str = ".txt") -> Path:
        """A new file name in the folder (made at the first call)."""
        if self.folder is None:
            remove_leftovers()
            self.folder = Path(tempfile.mkdtemp(prefix=f"{self.PREFIX}{os.getpid()}-"))
        self.count += 1
        return self.folder / f"{self.count}{suffix}"

    def copy(self, path: Path) -> Path:
        """Standard input or a pipe copied once to a file here (see formats.copy_stream)."""
        target = self.new()
        try:
            formats.copy_stream(path, target)
        except OSError as error:
            raise _unreadable(path, error) from None
        return target

    def close(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


def remove_leftovers() -> None:
    """Delete the temporary folders of ingests whose process is gone (killed ones)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{Spill.PREFIX}*"):
        pid = folder.name[len(Spill.PREFIX) :].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            pass  # alive, or not ours to judge


@dataclass
class RunFile:
    """One run file on its way in: sniffed at once, scanned in a worker thread later."""

    path: Path  # as given
    run_id: str
    first_tag: str
    delimiter: str
    source: Path | None = None  # what is read: the path, or the copy of standard input or a pipe
    scan: Future[formats.Scan] | None = None
    copy: Path | None = None  # the decompressed copy the scan writes, for a .gz file
    status: str = "ingested"

    @property
    def label(self) -> str:
        return formats.label(self.path)

    @property
    def readable(self) -> Path:
        """The file to read: the path, or the copy of standard input or a pipe."""
        return self.source if self.source is not None else self.path

    @property
    def text(self) -> Path:
        """The file DuckDB reads: the plain copy of a gzipped file once scanned, or the file."""
        return self.copy if self.copy is not None else self.readable

    def bad_line(self, *, ignore_extra_fields: bool, one_tag: bool) -> IngestError:
        """The error naming this file's first bad line (formats.locate_run_error)."""
        return formats.locate_run_error(
            self.text, ignore_extra_fields=ignore_extra_fields, one_tag=one_tag, label=self.label
        )

    def scanned(self) -> formats.Scan:
        """The scan of the file, waiting for its thread; read errors become IngestError."""
        assert self.scan is not None, "scan the file before asking for it"
        try:
            return self.scan.result()
        except READ_ERRORS as error:
            raise _unreadable(self.path, error) from None


class Scanner:
    """Scans run files in two worker threads, a batch ahead of DuckDB.

    A gzipped file is decompressed once, by its scan, into a temporary plain copy that DuckDB
    then reads: decompressing twice (for the hash, then in DuckDB) cost a tenth of a TREC-8
    ingest. Scanning only one batch ahead bounds the temporary space to about two batches.
    """

    def __init__(self, spill: Spill) -> None:
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.spill = spill

    def submit(self, files: list[RunFile], *, copy: bool) -> None:
        """Start scanning ``files`` (each once); gzipped ones get a plain copy if ``copy``."""
        for file in files:
            if file.scan is not None:
                continue
            if copy and file.readable.suffix == ".gz":
                file.copy = self.spill.new()
            file.scan = self.pool.submit(formats.scan, file.readable, file.copy)

    def release(self, files: list[RunFile]) -> None:
        """Delete the plain copies of files DuckDB has read."""
        for file in files:
            if file.copy is not None:
                file.copy.unlink(missing_ok=True)

    def close(self) -> None:
        """Stop pending scans, wait for running ones (the spill deletes the copies)."""
        self.pool.shutdown(wait=True, cancel_futures=True)


def _sniff(path: Path, run_id: str | None, ignore_extra_fields: bool, spill: Spill) -> RunFile:
    """Read the first data line of a run file for its delimiter and tag.

    Standard input and pipes are copied to a file first (they can be read only once).
    """
    source = spill.copy(path) if formats.needs_copy(path) else None
    name = formats.label(path)
    try:
        first = formats.first_data_line(source or path)
    except READ_ERRORS as error:
        raise _unreadable(path, error) from None
    if first is None:
        raise IngestError(name, None, "the file holds no run lines")
    count = len(first.fields)
    if count < formats.RUN_FIELDS or (count > formats.RUN_FIELDS and not ignore_extra_fields):
        raise formats.locate_run_error(
            source or path,
            ignore_extra_fields=ignore_extra_fields,
            one_tag=run_id is None,
            label=name,
        )
    tag = first.fields[formats.RUN_FIELDS - 1]
    if run_id is None and CONTROL.search(tag):
        raise IngestError(name, first.number, f"the run tag {tag!r} holds a control character, which a run id may not hold")
    return RunFile(path, run_id if run_id is not None else tag, tag, first.delimiter, source)


def group_batches(files: list[RunFile]) -> list[list[RunFile]]:
    """Group files of the same sniffed delimiter into batches of about _BATCH_BYTES of text."""
    by_delimiter: dict[str, list[RunFile]] = {}
    for file in files:
        by_delimiter.setdefault(file.delimiter, []).append(file)
    batches: list[list[RunFile]] = []
    for group in by_delimiter.values():
        batch: list[RunFile] = []
        size = 0
        for file in group:
            batch.append(file)
            ratio = GZIP_RATIO if file.readable.suffix == ".gz" else 1
            size += file.readable.stat().st_size * ratio
            if size >= _BATCH_BYTES:
                batches.append(batch)
                batch, size = [], 0
        if batch:
            batches.append(batch)
    return batches


def prepare_run_files(
    paths: list[Path], *, run_id: str | None, ignore_extra_fields: bool, spill: Spill
) -> list[RunFile]:
    """Check the file list and sniff each file's delimiter and tag (which names the run)."""
    if not paths:
        raise IngestError("runs", None, "no run files given")
    if run_id is not None and len(paths) != 1:
        raise IngestError(
            formats.label(paths[0]), None, "--run-id names one run; give exactly one file"
        )
    seen_paths: set[Path] = set()
    for path in paths:
        formats.require_file(path)
        if path.resolve() in seen_paths:
            raise IngestError(formats.label(path), None, "the file is given twice")
        seen_paths.add(path.resolve())

    files = [_sniff(path, run_id, ignore_extra_fields, spill) for path in paths]
    owners: dict[str, str] = {}
    for file in files:
        if file.run_id in owners:
            raise IngestError(
                file.label,
                None,
                f"run {file.run_id!r} is also in {owners[file.run_id]}; run ids must be unique "
                "(the tag of the first line names the run)",
            )
        owners[file.run_id] = file.label
    return files
