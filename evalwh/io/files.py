"""Files evalwh writes appear whole or not at all.

Every output (``-o`` of every command and format, reports, plots, the demo's files, an
export's directory) is written under a temporary name in the target's own directory, flushed
to disk, and renamed into place only once complete. A failure, Ctrl-C or a full disk leaves
the previous file untouched and removes the temporary; a process killed outright (SIGKILL)
leaves its temporary, which the next write into that directory removes (its process is gone).

No output may land on a database: every target is checked first (:func:`refuse_database`)
against the warehouses this process opened (:func:`guard_database`), their ``.wal`` files
(by resolved path and by inode), and any existing DuckDB file or the WAL beside one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from evalwh.errors import EvalWhError

_PARTIAL = ".partial-"
_GUARDED: dict[str, str] = {}  # resolved path of every warehouse this process opened -> as given


class DatabaseTargetError(EvalWhError):
    """An output path that is a warehouse, its WAL or another DuckDB file: refused, nothing written."""


def guard_database(path: str | os.PathLike[str]) -> None:
    """Record a DuckDB file this process opened: no output of the process may overwrite it or its WAL."""
    _GUARDED.setdefault(os.path.realpath(path), str(path))


def _inode(path: str) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def is_duckdb_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a DuckDB database file (its header's magic bytes ``DUCK`` at offset 8)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(12)[8:12] == b"DUCK"
    except OSError:
        return False


def refuse_database(target: str | os.PathLike[str], *databases: str | os.PathLike[str]) -> None:
    """Raise unless ``target`` may be written: it is not a database nor a database's WAL.

    Refused: a warehouse this process opened (or one of ``databases``, e.g. the command's
    ``--db``) or its ``.wal``, compared by resolved path and by inode (a symbolic or hard
    link to them is the same file); any existing DuckDB file; the ``.wal`` of one.

    Raises:
        DatabaseTargetError: one line naming the target and what it is.
    """
    resolved = os.path.realpath(target)
    inode = _inode(resolved)
    guarded = dict(_GUARDED)
    for database in databases:
        guarded.setdefault(os.path.realpath(database), str(database))
    for real, given in guarded.items():
        for suffix, what in (("", "the warehouse"), (".wal", "the write-ahead log of the warehouse")):
            if resolved == real + suffix or (inode is not None and inode == _inode(real + suffix)):
                raise DatabaseTargetError(
                    f"{target}: is {what} {given}; refusing to write output over it (give another file)"
                )
    if is_duckdb_file(resolved):
        raise DatabaseTargetError(f"{target}: is a DuckDB database; refusing to write output over it (give another file)")
    if resolved.endswith(".wal") and is_duckdb_file(resolved[: -len(".wal")]):
        raise DatabaseTargetError(
            f"{target}: is the write-ahead log of the DuckDB database {resolved[: -len('.wal')]}; "
            "refusing to write output over it (give another file)"
        )


def refuse_unwritable(target: str | os.PathLike[str]) -> None:
    """Raise unless an output file can be made at ``target``: its folder exists and takes
    files (checked before a command works, so a writer does not commit and then fail on a
    missing folder). A target that is not a regular file (``/dev/stdout``) is left to its write.

    Raises:
        EvalWhError: ``out/x.csv: the folder out does not exist; nothing was done``.
    """
    from evalwh.errors import EvalWhError

    path = Path(target)
    if path.exists() and not path.is_file():
        return
    folder = path.parent
    if not folder.is_dir():
        raise EvalWhError(f"{target}: the folder {folder} does not exist; nothing was done")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise EvalWhError(f"{target}: the folder {folder} does not take new files (no permission); nothing was done")


def partial_name(target: Path, pid: int | None = None) -> Path:
    """The temporary beside ``target``: ``.NAME.partial-PID.SUFFIX`` (the suffix kept for writers that read it)."""
    return target.with_name(f".{target.name}{_PARTIAL}{pid or os.getpid()}{target.suffix}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_leftovers(target: str | os.PathLike[str]) -> list[Path]:
    """Remove temporaries of ``target`` that processes no longer running left behind (files or directories).

    Returns:
        What was removed.
    """
    target = Path(target)
    pattern = re.compile(re.escape(f".{target.name}{_PARTIAL}") + r"(\d+)" + re.escape(target.suffix) + "?$")
    removed = []
    with contextlib.suppress(OSError):
        for entry in target.parent.iterdir():
            match = pattern.match(entry.name)
            if not match or int(match.group(1)) == os.getpid() or _alive(int(match.group(1))):
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    entry.unlink()
            removed.append(entry)
    return removed


def _fsync_directory(folder: Path) -> None:
    with contextlib.suppress(OSError):
        handle = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


def _special(target: Path) -> bool:
    """A target that is not a regular file (``/dev/stdout``, a pipe): written in place."""
    try:
        return not stat.S_ISREG(os.stat(target).st_mode)
    except FileNotFoundError:
        return False


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path to write ``target``'s content to; rename it into place on success.

    For writers that take a path (``DataFrame.to_parquet``, ``Figure.savefig``). On any
    exception (KeyboardInterrupt included) the temporary is removed and ``target`` is as before.

    Examples:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp()) / "a.txt"
        >>> with atomic_path(out) as part:
        ...     _ = part.write_text("whole")
        >>> out.read_text(), sorted(p.name for p in out.parent.iterdir())
        ('whole', ['a.txt'])
    """
    refuse_database(target)
    target = Path(target)
    if _special(target):
        yield target
        return
    remove_leftovers(target)
    part = partial_name(target)
    try:
        yield part
        with open(part, "rb+") as handle:
            os.fsync(handle.fileno())
        with contextlib.suppress(FileNotFoundError):
            # keep the permissions of the file replaced
            os.chmod(part, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(part, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            part.unlink()
        raise
    _fsync_directory(target.parent)


@contextlib.contextmanager
def atomic_output(
    target: str | os.PathLike[str], mode: str = "w", *, encoding: str | None = "utf-8", newline: str | None = None
) -> Iterator[IO[Any]]:
    """Open ``target`` for writing so that it appears whole or not at all (see :func:`atomic_path`).

    Examples:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp()) / "r.html"
        >>> _ = out.write_text("old")
        >>> try:
        ...     with atomic_output(out) as handle:
        ...         _ = handle.write("half of the new")
        ...         raise KeyboardInterrupt
        ... except KeyboardInterrupt:
        ...     pass
        >>> out.read_text(), sorted(p.name for p in out.parent.iterdir())
        ('old', ['r.html'])
    """
    binary = "b" in mode
    with atomic_path(target) as part:
        # O_EXCL: never write through a file or link someone else put under that name
        flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if part == Path(target) else os.O_EXCL)
        fd = os.open(part, flags, 0o666)
        with (
            os.fdopen(fd, mode, encoding=None if binary else encoding, newline=newline)
            if not binary
            else os.fdopen(fd, mode)
        ) as handle:
            yield handle
            handle.flush()


@contextlib.contextmanager
def new_directory(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Make ``path`` (and its missing parents) for a block; on failure remove those it made.

    A folder this call created is removed again when the block fails (a full disk, Ctrl-C),
    if it is empty by then; a folder that existed is left alone.

    Examples:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> try:
        ...     with new_directory(root / "a" / "b"):
        ...         raise OSError(28, "No space left on device")
        ... except OSError:
        ...     pass
        >>> list(root.iterdir())
        []
    """
    folder = Path(path)
    made = [p for p in (folder, *folder.parents) if not p.exists()]
    made = made[: next((i for i, p in enumerate(made) if p.exists()), len(made))]
    folder.mkdir(parents=True, exist_ok=True)
    try:
        yield folder
    except BaseException:
        for created in made:  # the innermost first
            with contextlib.suppress(OSError):
                created.rmdir()
        raise


def write_text(target: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``target`` atomically (UTF-8)."""
    with atomic_output(target) as handle:
        handle.write(text)


def is_disk_full(error: BaseException) -> bool:
    """Whether an error comes from a full disk or a file-size limit (ENOSPC, EDQUOT, EFBIG)."""
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return True
    text = str(error)
    return "No space left on device" in text or "File too large" in text or "Disk quota exceeded" in text


def fsync_tree(folder: str | os.PathLike[str]) -> None:
    """Flush every file under ``folder`` (and the folders) to disk, before a directory is renamed into place."""
    for root, _dirs, names in os.walk(folder):
        for name in names:
            handle = os.open(os.path.join(root, name), os.O_RDONLY)
            try:
                os.fsync(handle)
            finally:
                os.close(handle)
        _fsync_directory(Path(root))
