"""The same metric SQL on Spark (or another engine sqlglot writes): transpile and run.

The metric queries (``queries/metrics``) and the evaluation context (``queries/context``) are
written in DuckDB SQL. Here each file is parsed with sqlglot, its ``$name`` parameters are
replaced by typed literals *in the syntax tree* (never by string formatting), and the tree is
written in the target dialect. Two rewrites make the values agree with DuckDB's:

* DuckDB reads ``1.0`` as a DECIMAL but divides decimals in DOUBLE; Spark keeps DECIMAL and
  rounds ``1.0 / 3`` to 6 digits. Every non-integer literal is therefore cast to DOUBLE.
* A parameter that is NULL (``k`` = whole list, ``runs`` = all runs) becomes a NULL cast to
  the type its header declares, so the engine can type ``array_contains(NULL, ...)``.

:func:`evaluate` runs the whole path on a SparkSession over an evalwh Parquet export: the
exported tables become temporary views, every context step becomes a temporary view of a
checkpointed DataFrame (materialised once; a step may read the relation it replaces), and each
metric query runs as transpiled.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from evalwh import catalog, sql
from evalwh.errors import EvalWhError, MetricParamError
from evalwh.evaluation import Averaging, Options, Unjudged, context_steps

if TYPE_CHECKING:
    import pandas as pd

_CONTEXT = "evalwh.queries.context"
_DECLARED = re.compile(r"([a-z_][a-z0-9_]*)\s+([A-Z]+(?:\[\])?)")
# The tables the evaluation context reads; each must be in the export.
CONTEXT_TABLES = ("runs", "run_results", "run_topics", "qrels")


def declared_types(file: sql.SqlFile) -> dict[str, str]:
    """The parameter types a file's ``-- params:`` header declares, e.g. ``{"k": "INTEGER"}``."""
    return dict(_DECLARED.findall(file.header.get("params", "")))


def _literal(value: Any, sql_type: str) -> exp.Expression:
    target = exp.DataType.build("MAP(DOUBLE, DOUBLE)" if sql_type == "GAINS" else sql_type, dialect="duckdb")
    if value is None:
        return exp.Cast(this=exp.null(), to=target)
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(value)
    if isinstance(value, float):
        return exp.Cast(this=exp.Literal.number(repr(value)), to=exp.DataType.build("DOUBLE"))
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, (list, tuple)):
        element = sql_type[:-2] if sql_type.endswith("[]") else sql_type
        return exp.Array(expressions=[_literal(v, element) for v in value])
    raise MetricParamError(f"cannot write parameter value {value!r} as an SQL literal")


def bind(
    tree: exp.Expression,
    params: dict[str, Any],
    types: dict[str, str],
    *,
    keep: frozenset[str] = frozenset(),
) -> exp.Expression:
    """Replace every ``$name`` placeholder of ``tree`` by a typed literal of ``params[name]``.

    Placeholders named in ``keep`` stay parameters (Spark writes them as ``:name``).
    """
    missing = sorted({p.name for p in tree.find_all(exp.Placeholder)} - set(params) - keep)
    if missing:
        raise MetricParamError(f"no value for parameter(s) {missing}")

    def replace(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Placeholder) and node.name in params:
            return _literal(params[node.name], types.get(node.name, "VARCHAR"))
        return node

    return tree.transform(replace)


def _double_literals(node: exp.Expression) -> exp.Expression:
    # DuckDB divides DECIMAL literals in DOUBLE; other engines keep DECIMAL (see module doc)
    if isinstance(node, exp.Literal) and not node.is_string and not node.is_int:
        if not isinstance(node.parent, exp.Cast):
            return exp.Cast(this=node.copy(), to=exp.DataType.build("DOUBLE"))
    return node


def transpile(
    file: sql.SqlFile,
    params: dict[str, Any],
    *,
    dialect: str = "spark",
    keep: frozenset[str] = frozenset(),
) -> list[exp.Expression]:
    """Parse a shipped DuckDB SQL file, bind its parameters, adapt literals for ``dialect``.

    Args:
        file: A shipped SQL file (a metric or a context step).
        params: A value for every ``$name`` the file uses (but those in ``keep``).
        dialect: The sqlglot dialect the trees will be written in.
        keep: Parameters to leave as parameters.

    Returns:
        One syntax tree per statement; ``tree.sql(dialect=...)`` writes it.
    """
    types = declared_types(file)
    trees = [t for t in sqlglot.parse(file.text, read="duckdb") if t is not None]
    out = []
    for tree in trees:
        tree = bind(tree, params, types, keep=keep)
        if dialect != "duckdb":
            tree = tree.transform(_double_literals)
        out.append(tree)
    return out


def _step(tree: exp.Expression, file: sql.SqlFile) -> tuple[str, exp.Expression]:
    """A context statement as (relation name, the query that defines it)."""
    if not isinstance(tree, exp.Create) or not isinstance(tree.expression, exp.Query):
        raise EvalWhError(
            f"{file.source}: a context step must be CREATE ... AS SELECT to run on another engine"
        )
    return tree.this.name, tree.expression


def _variable(tree: exp.Expression) -> tuple[str, exp.Expression] | None:
    """``SET VARIABLE name = value`` as (name, value); None for any other statement."""
    if not isinstance(tree, exp.Set) or len(tree.expressions) != 1:
        return None
    item = tree.expressions[0]
    if not isinstance(item, exp.SetItem) or str(item.args.get("kind", "")).upper() != "VARIABLE":
        return None
    assignment = item.this
    if not isinstance(assignment, exp.EQ) or not isinstance(assignment.this, exp.Column):
        return None
    return assignment.this.name, assignment.expression


def _inline_variables(
    tree: exp.Expression, variables: dict[str, exp.Expression], file: sql.SqlFile
) -> exp.Expression:
    """Replace every ``getvariable('name')`` of ``tree`` by the value the context set."""

    def replace(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Anonymous) and node.name.lower() == "getvariable":
            (arg,) = node.expressions
            if not isinstance(arg, exp.Literal) or arg.this not in variables:
                raise EvalWhError(
                    f"{file.source}: getvariable({arg.sql()}) reads no variable the context set"
                )
            return variables[arg.this].copy()
        return node

    return tree.transform(replace)


def context_sql(
    collection: str | None, runs: Sequence[str] | None, options: Options, *, dialect: str = "spark"
) -> list[tuple[str, str]]:
    """The evaluation context as (relation name, query) pairs written in ``dialect``.

    Without ``collection`` the ``$collection_id`` parameter stays a parameter. The context's
    session variables (``SET VARIABLE``, read with ``getvariable``: DuckDB folds them into
    constants while planning) become their values, inlined where they are read.
    """
    if options.float32_ties:
        raise EvalWhError(
            "float32_ties re-ranks with the DuckDB table macro trec_ranked; "
            "on other engines the ranks materialised at ingest are used"
        )
    out = []
    variables: dict[str, exp.Expression] = {}
    keep = frozenset() if collection is not None else frozenset({"collection_id"})
    for name, params in context_steps(collection or "", runs, options):
        file = sql.query(_CONTEXT, name)
        if collection is None:
            params = {k: v for k, v in params.items() if k != "collection_id"}
        for tree in transpile(file, params, dialect=dialect, keep=keep):
            variable = _variable(tree)
            if variable is not None:
                variables[variable[0]] = variable[1]
                continue
            relation, query = _step(_inline_variables(tree, variables, file), file)
            out.append((relation, query.sql(dialect=dialect)))
    return out


def metric_sql(spec: str, *, dialect: str = "spark") -> str:
    """One measure's query (e.g. ``nDCG@10``) written in ``dialect``, parameters bound."""
    measure = catalog.parse(spec)
    (tree,) = transpile(measure.metric.file, measure.params, dialect=dialect)
    return tree.sql(dialect=dialect, pretty=True)


def show_metric(
    spec: str,
    *,
    collection: str | None = None,
    dialect: str = "spark",
    options: Options | None = None,
) -> str:
    """A complete script for ``dialect``: the context as temporary views, then the metric query.

    The script expects the warehouse tables (``runs, run_results, run_topics, qrels``) as
    tables or views of those names, e.g. Parquet files of an ``evalwh export``. Without
    ``collection`` the script keeps the parameter ``collection_id`` (``:collection_id`` in
    Spark SQL, bound with ``spark.sql(text, args={"collection_id": ...})``).

    Examples:
        >>> show_metric("P@10", collection="trec8").splitlines()[-2:]
        ['  p.run_id NULLS LAST,', '  p.query_id NULLS LAST;']
    """
    measure = catalog.parse(spec)
    lines = [
        f"-- {measure}: {measure.metric.description}",
        f"-- collection {collection!r}; written for {dialect} from the DuckDB SQL by sqlglot"
        if collection is not None
        else f"-- collection: parameter collection_id; written for {dialect} from the DuckDB SQL by sqlglot",
    ]
    for relation, query in context_sql(collection, None, options or Options(), dialect=dialect):
        view = exp.to_identifier(relation).sql(dialect=dialect)
        pretty = sqlglot.transpile(query, read=dialect, write=dialect, pretty=True)[0]
        lines.append(f"CREATE OR REPLACE TEMPORARY VIEW {view} AS\n{pretty};")
    lines.append(metric_sql(spec, dialect=dialect) + ";")
    return "\n\n".join(lines)


def register_export(
    spark: Any, directory: str | Path, tables: Sequence[str] = CONTEXT_TABLES
) -> None:
    """Make the tables of an evalwh Parquet export temporary views of ``spark``."""
    from evalwh.transfer import read_manifest

    manifest = read_manifest(Path(directory))
    root = Path(directory)
    for table in tables:
        entry = manifest["tables"].get(table)
        if entry is None or not entry["files"]:
            raise EvalWhError(
                f"{root}: the export has no rows of table {table!r}; export it with that table"
            )
        files = [str(root / f["path"]) for f in entry["files"]]
        spark.read.parquet(*files).createOrReplaceTempView(table)


def evaluate(
    spark: Any,
    measures: Sequence[str],
    *,
    collection: str,
    runs: Sequence[str] | None = None,
    depths: Sequence[int] | None = None,
    qrels_id: str = "default",
    rel: int = 1,
    unjudged: Unjudged | str = Unjudged.nonrelevant,
    depth_cap: int | None = None,
    averaging: Averaging | str = Averaging.default,
) -> pd.DataFrame:
    """Per-query values of ``measures`` computed by Spark with the transpiled metric SQL.

    The warehouse tables must already be views of ``spark`` (see :func:`register_export`).
    Options mean what they mean in :func:`evalwh.evaluation.evaluate`.

    Returns:
        ``run_id, query_id, measure, value``, sorted by run, query and the order of
        ``measures``, as :func:`evalwh.evaluation.evaluate` with ``per_query=True``.
    """
    import pandas as pd

    options = Options(
        qrels_id=qrels_id,
        rel=rel,
        unjudged=Unjudged(unjudged),
        depth_cap=depth_cap,
        averaging=Averaging(averaging),
    )
    parsed = catalog.expand(list(measures), list(depths) if depths else None)
    own = [str(m) for m in parsed if m.options or any(p.type == "GAINS" and m.params[p.name] is not None for p in m.metric.params)]
    if own:  # (evaluation.compute re-derives the context for these; this path does not)
        raise MetricParamError(f"{', '.join(own)}: rel=, judged_only= and gain maps are not supported on Spark")
    if options.unjudged is Unjudged.condensed:
        bad = [str(m) for m in parsed if not m.metric.condensable]
        if bad:
            raise MetricParamError(
                f"{', '.join(bad)}: assessment measures are undefined on condensed lists"
            )
    for relation, query in context_sql(collection, runs, options, dialect="spark"):
        # Materialise each step and cut its lineage: a DataFrame keeps its analysed plan, so a
        # step may read the relation it replaces, and every metric query plans against small
        # scans instead of the whole chain of context queries (ten times faster on Spark 4).
        spark.sql(query).localCheckpoint(eager=True).createOrReplaceTempView(relation)
    rows = []
    for measure in parsed:
        (tree,) = transpile(measure.metric.file, measure.params, dialect="spark")
        label = str(measure)
        rows += [
            (r["run_id"], r["query_id"], label, r["value"])
            for r in spark.sql(tree.sql(dialect="spark")).collect()
        ]
    out = pd.DataFrame(rows, columns=["run_id", "query_id", "measure", "value"])
    out["value"] = out["value"].astype("float64")
    order = {str(m): i for i, m in enumerate(parsed)}
    out = out.assign(_order=out["measure"].map(order)).sort_values(["run_id", "query_id", "_order"])
    return out.drop(columns="_order").reset_index(drop=True)
