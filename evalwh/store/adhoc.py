"""Ad-hoc SQL over a warehouse: the connection guards the data, sqlglot explains.

Safety is a property of the connection, not of a parser: the CLI runs read-only SQL on
:meth:`Warehouse.open_reader` with ``sandbox=True`` (a read-only connection; DuckDB's local
file system and external access off, so no statement reads or writes any file or reaches the
network; no extension installed or loaded; settings locked). Read-only SQL therefore reads
nothing but the warehouse: to join a CSV, ingest it, or use the Python API.

Before DuckDB runs a statement, sqlglot (DuckDB dialect) parses it, only to give friendly
messages: a statement that would change the warehouse is named and refused with a hint to
``--write``; unknown tables and columns get a "did you mean" from the catalog in
``information_schema``. With ``write`` every statement runs in one transaction, and
transaction statements (``BEGIN``, ``COMMIT``, ``ROLLBACK``, ...) are refused, as DuckDB's own
parser types them, so nothing inside can end that transaction early.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from evalwh.errors import QueryError

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.store.connection import Store

# Statement kinds that only read. EXPLAIN is checked through the statement it explains.
_READ_ONLY = (exp.Select, exp.SetOperation, exp.Describe, exp.Show, exp.Summarize, exp.Pivot)
_READ_ONLY_COMMANDS = ("SHOW", "DESCRIBE")
_DUCKDB_READ_ONLY = ("SELECT", "EXPLAIN")
# DuckDB statement types that would end evalwh's one transaction or change the session
_SESSION_STATEMENTS = ("TRANSACTION", "ATTACH", "DETACH")


class ReadOnlyError(QueryError):
    """A statement that would change the warehouse (or write files) without ``--write``."""


@dataclass(frozen=True)
class Checked:
    """One statement of the user's text after the check: its kind and the sqlglot tree."""

    kind: str
    tree: exp.Expression | None


def parse_param(text: str) -> tuple[str, Any]:
    """Parse a ``name=value`` parameter; the value is read as JSON when it is valid JSON.

    So ``k=10`` gives the integer 10, ``p=0.8`` a float, ``flag=true`` a boolean,
    ``runs=["a","b"]`` a list and ``run=bm25`` (not JSON) the string ``"bm25"``; quote a
    string that looks like a number: ``query='"401"'``.

    Examples:
        >>> parse_param("k=10"), parse_param("run=bm25"), parse_param('q="401"')
        (('k', 10), ('run', 'bm25'), ('q', '401'))
    """
    name, sep, raw = text.partition("=")
    name = name.strip().lstrip("$")
    if not sep or not name.isidentifier():
        raise QueryError(f"--param {text!r}: expected name=value, e.g. k=10")
    try:
        value: Any = json.loads(raw)
    except ValueError:
        value = raw
    return name, value


@contextlib.contextmanager
def _quiet_sqlglot() -> Iterator[None]:
    """Drop sqlglot's "falling back to Command" warnings: the check reports its own findings."""
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _syntax_error(text: str, error: ParseError | TokenError) -> QueryError:
    """One line: where the syntax error is and the token there (the statement is not repeated)."""
    if isinstance(error, ParseError) and error.errors:
        detail = error.errors[0]
        line, col = int(detail.get("line") or 1), int(detail.get("col") or 1)
        token = detail.get("highlight") or ""
        description = str(detail.get("description"))
        incomplete = re.search(r"missing for <class '[\w.]*?(\w+)'>", description)
        if incomplete:
            description = f"incomplete {incomplete.group(1).upper()} expression"
        # sqlglot reports the column where the offending token ends; show where it starts
        col = max(col - len(token) + 1, 1)
        return QueryError(f"syntax error at line {line}, column {col} near {token[:40]!r}: {description}")
    return QueryError(f"syntax error: {str(error).splitlines()[0] if str(error) else type(error).__name__}")


def check(
    text: str, *, write: bool = False, con: duckdb.DuckDBPyConnection | None = None
) -> list[Checked]:
    """Parse ``text`` (one or more statements) and refuse writes unless ``write``.

    Args:
        text: The SQL, DuckDB dialect.
        write: Allow statements that change data.
        con: A connection whose parser decides when sqlglot cannot parse valid DuckDB SQL.

    Returns:
        One entry per statement.

    Raises:
        QueryError: for a syntax error, with its line and column.
        ReadOnlyError: for a statement that writes, when ``write`` is false.

    Examples:
        >>> [c.kind for c in check("SELECT 1; DESCRIBE SELECT 2")]
        ['Select', 'Describe']
        >>> check("DROP TABLE runs")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        evalwh.store.adhoc.ReadOnlyError: statement 1 (Drop) would change the warehouse; ...
    """
    if not text.strip():
        raise QueryError("no SQL given; pass a statement, a file, or - for standard input")
    try:
        with _quiet_sqlglot():
            trees = [t for t in sqlglot.parse(text, read="duckdb") if t is not None]
    except (ParseError, TokenError) as error:
        # sqlglot does not know every DuckDB construct: let DuckDB's own parser decide
        return _check_with_duckdb(text, write, con, _syntax_error(text, error))
    checked = []
    for number, tree in enumerate(trees, 1):
        kind = type(tree).__name__
        if not write and not _reads_only(tree):
            label = str(tree.this).upper() if isinstance(tree, exp.Command) else kind
            raise ReadOnlyError(
                f"statement {number} ({label}) would change the warehouse; "
                "only SELECT, WITH, DESCRIBE, SHOW, SUMMARIZE and EXPLAIN run read-only "
                "(pass --write to allow changes)"
            )
        checked.append(Checked(kind, tree))
    if not checked:
        raise QueryError("no SQL statement found (only comments?)")
    return checked


def _reads_only(tree: exp.Expression) -> bool:
    if isinstance(tree, _READ_ONLY):
        return True
    if isinstance(tree, exp.Command):
        command = str(tree.this).upper()
        if command in _READ_ONLY_COMMANDS:
            return True
        if command == "EXPLAIN":
            rest = (
                tree.expression.name
                if isinstance(tree.expression, exp.Literal)
                else str(tree.expression or "")
            )
            rest = rest.strip()
            if rest.upper().startswith("ANALYZE"):
                rest = rest[len("ANALYZE") :]
            try:
                with _quiet_sqlglot():
                    inner = [t for t in sqlglot.parse(rest, read="duckdb") if t is not None]
            except (ParseError, TokenError):
                return False
            return len(inner) == 1 and _reads_only(inner[0])
    return False


def _check_with_duckdb(
    text: str, write: bool, con: duckdb.DuckDBPyConnection | None, syntax: QueryError
) -> list[Checked]:
    if con is None:
        raise syntax
    try:
        statements = con.extract_statements(text)
    except duckdb.Error:
        raise syntax from None
    checked = []
    for number, statement in enumerate(statements, 1):
        kind = statement.type.name
        if not write and kind not in _DUCKDB_READ_ONLY:
            raise ReadOnlyError(
                f"statement {number} ({kind}) would change the warehouse; "
                "only SELECT, WITH, DESCRIBE, SHOW, SUMMARIZE and EXPLAIN run read-only "
                "(pass --write to allow changes)"
            )
        checked.append(Checked(kind, None))
    return checked


def catalog(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Every table and view the connection sees (temporary ones too) with its columns."""
    rows = con.execute(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema IN ('main', 'temp') ORDER BY table_name, ordinal_position"
    ).fetchall()
    out: dict[str, list[str]] = {}
    for table, column in rows:
        out.setdefault(table, []).append(column)
    return out


def _suggest(name: str, candidates: list[str]) -> str:
    lowered = {c.lower(): c for c in candidates}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.6)
    return f". Did you mean {' or '.join(lowered[c] for c in close)}?" if close else ""


def _unknown_tables(tree: exp.Expression, known: dict[str, list[str]]) -> QueryError | None:
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    names = {t.lower() for t in known}
    for table in tree.find_all(exp.Table):
        # a table function (read_parquet(...)) or a name in another schema is not ours to check
        if (
            not isinstance(table.this, exp.Identifier)
            or table.args.get("db")
            or table.args.get("catalog")
        ):
            continue
        name = table.name
        if name.lower() in ctes or name.lower() in names:
            continue
        return QueryError(
            f"unknown table {name!r}{_suggest(name, list(known))} (evalwh schema lists them)"
        )
    return None


def _unknown_column(tree: exp.Expression, known: dict[str, list[str]]) -> QueryError | None:
    """Name a column that no referenced table has and no alias defines."""
    tables = {t.name.lower() for t in tree.find_all(exp.Table)}
    available = [c for t, cols in known.items() if t.lower() in tables for c in cols]
    defined = {c.lower() for c in available}
    defined |= {a.alias.lower() for a in tree.find_all(exp.Alias)}
    for alias in tree.find_all(exp.TableAlias):
        defined |= {c.name.lower() for c in alias.columns}
    for cte in tree.find_all(exp.CTE):
        query = cte.this
        if isinstance(query, exp.Query):
            defined |= {s.lower() for s in query.named_selects}
    for column in tree.find_all(exp.Column):
        name = column.name
        if name and name.lower() not in defined:
            return QueryError(f"unknown column {name!r}{_suggest(name, sorted(set(available)))}")
    return None


def run(
    wh: Store, text: str, params: Mapping[str, Any] | None = None, *, write: bool = False
) -> pd.DataFrame:
    """Check and run the user's SQL; return the result of the last statement.

    Parameters are DuckDB named parameters (``$k`` in the SQL, ``{"k": 10}`` here); each
    statement receives the ones it uses, and a parameter no statement uses is an error. With
    ``write`` all statements run in one transaction, rolled back if any fails.

    Args:
        wh: An open warehouse (read-only unless ``write``).
        text: One or more statements, DuckDB dialect.
        params: Values for ``$name`` placeholders.
        write: Allow statements that change data.

    Returns:
        The rows of the last statement (an empty frame if it returns none).

    Raises:
        ReadOnlyError: for a writing statement without ``write``.
        QueryError: for a syntax error (with line and column), an unknown table or column
            (with a suggestion), a missing or unused parameter, or a failure in DuckDB.

    Examples:
        >>> import pandas as pd
        >>> from evalwh import Warehouse
        >>> wh = Warehouse(":memory:")
        >>> _ = wh.ingest_qrels(pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"],
        ...                                   "relevance": [1, 0]}), collection="demo")
        >>> run(wh, "SELECT doc_id FROM qrels WHERE relevance >= $rel", {"rel": 1}).doc_id.tolist()
        ['a']
        >>> run(wh, "SELECT * FROM qrel")
        Traceback (most recent call last):
        ...
        evalwh.errors.QueryError: unknown table 'qrel'. Did you mean qrels? (evalwh schema lists them)
    """
    import pandas as pd

    params = dict(params or {})
    if write and wh.read_only:
        raise QueryError(
            f"{wh.path}: opened read-only; open it for writing to run writing statements"
        )
    checked = check(text, write=write, con=wh.con)
    known = catalog(wh.con)
    for item in checked:
        # (with write, a statement may name a table an earlier one creates: DuckDB decides,
        # and its catalog error gets the same message below)
        if item.tree is not None and not write:
            missing = _unknown_tables(item.tree, known)
            if missing is not None:
                raise missing
    try:
        statements = wh.con.extract_statements(text)
    except duckdb.Error as error:
        raise QueryError(str(error)) from None
    for number, statement in enumerate(statements, 1):
        if statement.type.name in _SESSION_STATEMENTS:
            raise QueryError(
                f"statement {number} ({statement.type.name}) is not allowed: evalwh sql runs all "
                "statements in one transaction (with --write, committed only if every one succeeds); "
                "leave out BEGIN, COMMIT, ROLLBACK, ATTACH and DETACH"
            )
    used = {name for s in statements for name in s.named_parameters}
    unused = sorted(set(params) - used)
    if unused:
        expected = ", ".join(f"${n}" for n in sorted(used)) or "none"
        raise QueryError(f"parameter(s) {unused} are not used by the SQL (it uses: {expected})")
    result: duckdb.DuckDBPyConnection | None = None
    with wh.transaction() if write else contextlib.nullcontext():
        for number, statement in enumerate(statements):
            wanted = {k: params[k] for k in statement.named_parameters if k in params}
            lacking = sorted(set(statement.named_parameters) - set(wanted))
            if lacking:
                raise QueryError(
                    f"no value for parameter(s) {', '.join('$' + n for n in lacking)}; "
                    f"give --param {lacking[0]}=VALUE"
                )
            try:
                result = wh.con.execute(statement.query, wanted)
            except duckdb.BinderException as error:
                tree = checked[number].tree if number < len(checked) else None
                better = _unknown_column(tree, known) if tree is not None else None
                raise (better or QueryError(str(error))) from None
            except duckdb.CatalogException as error:
                tree = checked[number].tree if number < len(checked) else None
                about_table = tree is not None and "Table with name" in str(error)
                better = _unknown_tables(tree, known) if about_table else None
                raise (better or QueryError(str(error))) from None
            except duckdb.PermissionException:
                raise QueryError(
                    f"statement {number + 1} reaches outside the warehouse (a file, the network, "
                    "an extension or a setting), which evalwh sql does not allow; "
                    "ingest the data, or use the Python API"
                ) from None
            except duckdb.Error as error:
                message = str(error)
                if "extension" in message and "INSTALL" in message:
                    message = message.splitlines()[0] + " (evalwh sql installs and loads no extension)"
                raise QueryError(message) from None
        if result is None or result.description is None:
            return pd.DataFrame()
        return result.df()


def transpile(text: str, dialect: str) -> str:
    """Write the user's DuckDB SQL in another sqlglot dialect (``spark``, ``postgres``, ...).

    Examples:
        >>> print(transpile("SELECT list_contains($runs, run_id) FROM runs", "spark"))
        SELECT
          ARRAY_CONTAINS(:runs, run_id)
        FROM runs;
    """
    dialects = sorted(d.value for d in sqlglot.Dialects if d.value)
    if dialect not in dialects:
        close = difflib.get_close_matches(dialect, dialects, n=1)
        hint = f" Did you mean {close[0]}?" if close else ""
        raise QueryError(
            f"unknown SQL dialect {dialect!r}.{hint} (sqlglot knows: {', '.join(dialects)})"
        )
    try:
        with _quiet_sqlglot():
            statements = sqlglot.transpile(text, read="duckdb", write=dialect, pretty=True)
    except (ParseError, TokenError) as error:
        raise _syntax_error(text, error) from None
    return "\n".join(s + ";" for s in statements)


def schema(wh: Store, relation: str | None = None) -> pd.DataFrame:
    """The warehouse's tables and views with their comments, or the columns of one relation.

    Returns:
        Without ``relation``: ``relation, kind, description, columns``, one row per table or
        view (evalwh's internal bookkeeping excluded). With ``relation``: ``column, type,
        description``, one row per column.

    Raises:
        NotFoundError: for an unknown relation, with a suggestion.
    """
    import pandas as pd

    from evalwh.errors import NotFoundError

    relations = wh.con.execute(
        "SELECT table_name AS relation, 'table' AS kind, coalesce(comment, '') AS description "
        "FROM duckdb_tables() WHERE schema_name = 'main' AND NOT temporary AND NOT internal "
        "AND table_name <> 'schema_migrations' "
        "UNION ALL "
        "SELECT view_name, 'view', coalesce(comment, '') FROM duckdb_views() "
        "WHERE schema_name = 'main' AND NOT temporary AND NOT internal "
        "ORDER BY kind DESC, relation"
    ).df()
    columns = wh.con.execute(
        "SELECT table_name AS relation, column_name AS column, data_type AS type, "
        "coalesce(comment, '') AS description "
        "FROM duckdb_columns() WHERE schema_name = 'main' AND NOT internal "
        "ORDER BY table_name, column_index"
    ).df()
    if relation is None:
        names = columns.groupby("relation", sort=False)["column"].agg(", ".join)
        relations["columns"] = relations["relation"].map(names).fillna("")
        return pd.DataFrame(relations.reset_index(drop=True))
    if relation not in set(relations["relation"]):
        hint = _suggest(relation, list(relations["relation"]))
        raise NotFoundError(f"no table or view {relation!r}{hint} (evalwh schema lists them)")
    one = columns[columns["relation"] == relation]
    return pd.DataFrame(one[["column", "type", "description"]].reset_index(drop=True))


def empty_note(con: duckdb.DuckDBPyConnection, text: str) -> str | None:
    """Why a query's empty answer may be no surprise: a relation it reads holds stored results
    only a command with ``--store`` (or another command) fills, and holds none yet.

    The reason is the relation's own description (``evalwh schema``), so a note never
    disagrees with the documentation. None when every relation the query reads has rows.
    """
    with _quiet_sqlglot():
        try:
            trees = [t for t in sqlglot.parse(text, read="duckdb") if t is not None]
        except (ParseError, TokenError):
            return None
    names = {t.name.lower() for tree in trees for t in tree.find_all(exp.Table) if isinstance(t.this, exp.Identifier)}
    if not names:
        return None
    described = con.execute(
        "SELECT table_name, comment FROM duckdb_tables() WHERE schema_name = 'main' "
        "UNION ALL SELECT view_name, comment FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal"
    ).fetchall()
    for name, comment in sorted(described):
        stored = comment is not None and ("filled" in comment or "empty until" in comment)
        if stored and name.lower() in names:
            if con.execute(f"SELECT count(*) FROM (SELECT 1 FROM {name} LIMIT 1)").fetchone()[0] == 0:  # noqa: S608 (a catalog name)
                return f"{name} is empty: {comment}"
    return None
