"""The same metric SQL on Spark (or another engine sqlglot writes): transpile and run.

The metric queries (``queries/metrics``) and the evaluation context (``queries/context``) are
written in DuckDB SQL. Here each file is parsed with sqlglot, its ``$name`` parameters are
replaced by typed literals *in the syntax tree* (never by string formatting), and the tree is
written in the target dialect. Three rewrites make the values agree with DuckDB's:

* DuckDB reads ``1.0`` as a DECIMAL but divides decimals in DOUBLE; Spark keeps DECIMAL and
  rounds ``1.0 / 3`` to 6 digits. Every non-integer literal is therefore cast to DOUBLE.
* A parameter that is NULL (``k`` = whole list, ``runs`` = all runs) becomes a NULL cast to
  the type its header declares, so the engine can type ``array_contains(NULL, ...)``.
* Spark has no ordered aggregate: ``sum(x ORDER BY rank)`` (the metric SQL adds in trec_eval's
  order, methods §0.4) becomes the terms collected with their keys, sorted and added in that
  order (:func:`_ordered_sums`), so Spark adds them in the warehouse's order too.

:func:`evaluate` runs the whole path on a SparkSession over the warehouse's tables as views
(an evalwh Parquet export, :func:`register_export`, or files read by :mod:`.files`): every
context step becomes a lazy temporary view (a step may read the relation it replaces), the
relations the metrics read are materialised once (:data:`MATERIALISED`: the judged rows with
their running counts, the run-topic pairs, qrels and topics), and the metric queries of the
request run as one union (one SQL statement, analysed once: :func:`metrics_sql`), one job,
whose values come back as an Arrow table.

:mod:`.files` reads, checks and ranks TREC files on Spark; :mod:`.writeback` writes what it
ranked as an evalwh export and values as Parquet; :mod:`.session` starts a quiet, tuned
session; :mod:`.standalone` runs a standalone cluster on this machine (tests, benchmarks).

May import: :mod:`evalwh.measures`, :mod:`evalwh.store`, :mod:`evalwh.io`,
:mod:`evalwh.errors`, :mod:`evalwh.sql`. The ``spark-submit`` entry point is
:mod:`evalwh.cli.spark_submit`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from evalwh.measures import catalog
from evalwh import sql
from evalwh.errors import EvalWhError, MetricParamError
from evalwh.store.context import Averaging, Options, Unjudged, context_steps
from evalwh.measures.evaluation import parse_measures

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


_MACROS: dict[str, exp.Create] = {}


def macro(name: str) -> exp.Create:
    """The DuckDB macro ``name`` of the schema (``schema/*.sql``), parsed once.

    A step that redefines a macro (``CREATE OR REPLACE MACRO``) replaces the earlier
    definition, as it does in a warehouse: the steps are read in the order they apply.
    """
    if not _MACROS:
        for file in sql.load_package("evalwh.schema").values():
            for tree in sqlglot.parse(file.text, read="duckdb"):
                if isinstance(tree, exp.Create) and str(tree.args.get("kind", "")).upper() == "MACRO":
                    _MACROS[tree.this.this.name.lower()] = tree
    if name.lower() not in _MACROS:
        raise EvalWhError(f"the schema defines no macro {name!r}")
    return _MACROS[name.lower()]


def _arguments(call: exp.Expression, definition: exp.Create) -> dict[str, exp.Expression]:
    names = [p.name for p in definition.this.expressions]
    if len(names) != len(call.expressions):
        raise EvalWhError(f"{call.sql()}: the macro takes {len(names)} arguments")
    return dict(zip(names, call.expressions))


def _expand_macros(node: exp.Expression) -> exp.Expression:
    """``FROM trec_ranked('relation', flag)`` as the macro's body over that relation, and a
    call of a scalar macro (``float32_score(score)``) as its expression over the arguments.

    DuckDB's macros (schema/001_core.sql, 021, 022) have no counterpart on other engines;
    the body is the same SQL with ``query_table(results)`` naming the relation and the other
    parameters their arguments, so every engine ranks with the one definition. The macros a
    body calls are expanded in turn.
    """
    if isinstance(node, exp.Anonymous) and not isinstance(node.parent, exp.Table):
        try:
            definition = macro(node.name)
        except EvalWhError:
            return node
        if isinstance(definition.expression, exp.Query):
            return node
        values = _arguments(node, definition)

        def argument(inner: exp.Expression) -> exp.Expression:
            if isinstance(inner, exp.Column) and not inner.table and inner.name in values:
                value = values[inner.name].copy()
                simple = isinstance(value, (exp.Column, exp.Literal))
                return value if simple else exp.Paren(this=value)
            return inner

        body = definition.expression.copy().transform(argument)
        return exp.Paren(this=body).transform(_expand_macros)
    if not (isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous)):
        return node
    call = node.this
    if call.name.lower() == "query_table":
        return node
    try:
        definition = macro(call.name)
    except EvalWhError:
        return node
    values = _arguments(call, definition)

    def substitute(inner: exp.Expression) -> exp.Expression:
        if isinstance(inner, exp.Table) and isinstance(inner.this, exp.Anonymous):
            if inner.this.name.lower() == "query_table":
                (arg,) = inner.this.expressions
                relation = values[arg.name]
                if not isinstance(relation, exp.Literal) or not relation.is_string:
                    raise EvalWhError(f"{call.sql()}: name the relation as a string literal")
                return exp.to_table(relation.this)
        if isinstance(inner, exp.Column) and not inner.table and inner.name in values:
            return values[inner.name].copy()
        return inner

    body = definition.expression.copy().transform(substitute).transform(_expand_macros)
    return exp.Subquery(this=body, alias=exp.TableAlias(this=exp.to_identifier(node.alias or call.name)))


_ELEMENT_AT_DIALECTS = frozenset({"spark", "spark2", "databricks"})


def _element_at(node: exp.Expression) -> exp.Expression:
    # DuckDB lists count from 1 and sqlglot shifts only literal indexes; element_at counts
    # from 1 on Spark too, whatever the index is
    if isinstance(node, exp.Bracket) and len(node.expressions) == 1 and isinstance(node.this, exp.Array):
        return exp.Anonymous(this="element_at", expressions=[node.this.copy(), node.expressions[0].copy()])
    return node


def _ordered_sums(node: exp.Expression) -> exp.Expression:
    """``sum(x ORDER BY k)`` (the metric SQL's sums in trec_eval's order, methods §0.4) where the
    engine has no ordered aggregate (Spark): the non-NULL terms collected with their keys, sorted,
    and added from the first, ``aggregate(array_sort(collect_list(struct(k, x))), 0D, (acc, e) ->
    acc + e.x)`` (reversed for ``DESC``), NULL where there is no term, as ``sum`` gives."""
    if not isinstance(node, exp.Sum) or not isinstance(node.this, exp.Order):
        return node
    term = node.this.this
    keys = node.this.expressions
    if len({bool(key.args.get("desc")) for key in keys}) != 1:
        raise EvalWhError(f"{node.sql()}: an ordered sum on Spark needs its keys all ascending or all descending")
    pair = exp.Anonymous(this="struct", expressions=[
        *(exp.alias_(key.this.copy(), f"k{i}") for i, key in enumerate(keys)), exp.alias_(term.copy(), "v")])  # fmt: skip
    kept = exp.Case(ifs=[exp.If(this=exp.Not(this=exp.Is(this=term.copy(), expression=exp.Null())), true=pair)])
    ordered = exp.Anonymous(this="array_sort", expressions=[exp.Anonymous(this="collect_list", expressions=[kept])])
    if keys[0].args.get("desc"):
        ordered = exp.Anonymous(this="reverse", expressions=[ordered])
    added = sqlglot.parse_one("aggregate(terms, CAST(0 AS DOUBLE), (acc, e) -> acc + e.v)", read="spark")
    added.set("this", ordered)
    found = exp.Count(this=term.copy())
    return exp.Case(ifs=[exp.If(this=exp.EQ(this=found, expression=exp.Literal.number(0)), true=exp.Null())],
                    default=added)  # fmt: skip


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
            tree = tree.transform(_expand_macros).transform(_double_literals)
        if dialect in _ELEMENT_AT_DIALECTS:
            tree = tree.transform(_element_at).transform(_ordered_sums)
        out.append(tree)
    return out


def ingest_selects(file: sql.SqlFile, params: dict[str, Any], *, dialect: str = "spark") -> list[tuple[str, str]]:
    """An ingest file's statements as (relation, query) pairs: what it would create or insert.

    ``CREATE VIEW v AS q`` gives ``(v, q)`` and ``INSERT INTO t (cols) q`` gives ``(t, q)``
    with ``q``'s columns named ``cols``: on an engine without the warehouse's tables, each
    becomes a temporary view of that name (e.g. ``insert_run_results.sql`` on Spark).
    """
    out = []
    for tree in transpile(file, params, dialect=dialect):
        if isinstance(tree, exp.Insert) and isinstance(tree.expression, exp.Select):
            target = tree.this
            columns = [c.name for c in target.expressions] if isinstance(target, exp.Schema) else []
            query = tree.expression.copy()
            if columns:
                if len(columns) != len(query.expressions):
                    raise EvalWhError(f"{file.source}: INSERT column list and SELECT differ in length")
                query.set("expressions", [exp.alias_(e.unalias() if isinstance(e, exp.Alias) else e, c) for e, c in zip(query.expressions, columns)])
            name = target.this.name if isinstance(target, exp.Schema) else target.name
            out.append((name, query.sql(dialect=dialect)))
        else:
            relation, query = _step(tree, file)
            out.append((relation, query.sql(dialect=dialect)))
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


def export_rows(directory: str | Path, collection: str | None = None) -> int:
    """The ranked rows (``run_results``) of an export's collection, every collection's when
    none is named, from its manifest: the rows the JVM reads and joins itself, which choose a
    local session's JVM options (:data:`evalwh.spark.session.SECOND_TIER_ROWS`)."""
    from evalwh.store.transfer import PARTITION, read_manifest

    files = read_manifest(Path(directory))["tables"].get("run_results", {}).get("files", [])
    return sum(int(f["rows"]) for f in files if collection is None or f.get(PARTITION, collection) == collection)


def register_export(
    spark: Any, directory: str | Path, tables: Sequence[str] = CONTEXT_TABLES
) -> None:
    """Make the tables of an evalwh Parquet export temporary views of ``spark``."""
    from evalwh.store.transfer import PARTITION, _inside, check_export, partition_in_files, read_manifest

    manifest = read_manifest(Path(directory))
    root = Path(directory)
    reader_rows.pop(id(spark), None)
    for table in tables:
        entry = manifest["tables"].get(table)
        if entry is None or not entry["files"]:
            raise EvalWhError(
                f"{root}: the export has no rows of table {table!r}; export it with that table"
            )
    # as import checks them: paths inside the folder, checksums, row counts, duplicate keys
    check_export(root, tables)
    for table in tables:
        entry = manifest["tables"][table]
        files = [str(_inside(root, f["path"])) for f in entry["files"]]
        if partition_in_files(manifest, entry):
            frame = spark.read.parquet(*files)
            # (one row per run: a broadcast join, see evalwh.spark.files.BROADCAST)
            (frame.hint("broadcast") if table == "runs" else frame).createOrReplaceTempView(table)
            continue
        # the collection of each file is the manifest's, as text (Spark's partition discovery
        # would read a collection named 2004 as a number)
        from pyspark.sql import functions

        parts = [
            spark.read.parquet(path).withColumn(PARTITION, functions.lit(f[PARTITION]))
            for path, f in zip(files, entry["files"], strict=True)
        ]
        frame = parts[0]
        for part in parts[1:]:
            frame = frame.unionByName(part)
        (frame.hint("broadcast") if table == "runs" else frame).createOrReplaceTempView(table)


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
    float32_ties: bool = False,
    averaging: Averaging | str = Averaging.default,
    typed_names: bool = False,
) -> pd.DataFrame:
    """Per-query values of ``measures`` computed by Spark with the transpiled metric SQL.

    The warehouse tables must already be views of ``spark`` (see :func:`register_export`).
    Options mean what they mean in :func:`evalwh.measures.evaluation.evaluate`, and so does
    ``typed_names`` (``RBP(p=0.8)@10`` as typed rather than ``RBP@10``). The context is
    built once (:func:`build_context`) and every measure computed in one Spark job.

    Returns:
        ``run_id, query_id, measure, value``, sorted by run, query and the order of
        ``measures``, as :func:`evalwh.measures.evaluation.evaluate` with ``per_query=True``.
    """
    parsed, context = parse_options(
        measures,
        dict(depths=depths, qrels_id=qrels_id, rel=rel, unjudged=unjudged, depth_cap=depth_cap,
             float32_ties=float32_ties, averaging=averaging),
    )
    build_context(spark, collection, runs, context)
    return _collect(spark, parsed, typed_names=typed_names)


def context_options(options: dict[str, Any]) -> Options:
    """The evaluation context's options from :func:`evaluate`'s keywords (others ignored)."""
    given = {k: v for k, v in options.items() if k not in ("depths", "typed_names")}
    if "unjudged" in given:
        given["unjudged"] = Unjudged(given["unjudged"])
    if "averaging" in given:
        given["averaging"] = Averaging(given["averaging"])
    return Options(**given)


def parse_options(measures: Sequence[str], options: dict[str, Any]) -> tuple[list[catalog.Measure], Options]:
    """The measures parsed and the context's options, from :func:`evaluate`'s keywords.

    ``options`` may hold ``depths``, ``qrels_id``, ``rel``, ``unjudged``, ``depth_cap``,
    ``float32_ties``, ``averaging`` (and ``typed_names``, ignored here). Refuses what the Spark
    path does not compute (a measure's own ``rel=``, ``judged_only=``, gain maps).
    """
    context = context_options(options)
    parsed = parse_measures(measures, options.get("depths"), context)
    own = [str(m) for m in parsed if m.options or any(p.type == "GAINS" and m.params[p.name] is not None for p in m.metric.params)]
    if own:  # (evaluation.compute re-derives the context for these; this path does not)
        raise MetricParamError(f"{', '.join(own)}: rel=, judged_only= and gain maps are not supported on Spark")
    by_source = [str(m) for m in parsed if "ev_judged_sources" in m.metric.file.text]
    if by_source:  # (the provenance of label sets, qrels_sets, is not among the exported tables)
        raise MetricParamError(f"{', '.join(by_source)}: the judged share by source is not supported on Spark")
    return parsed, context


# Runs read by evalwh's reader on the executors (evalwh.spark.files.load_runs(reader=
# "evalwh")), by session: the threshold and float32 flag their judged rows were counted and
# ranked with; the evaluation reads those rows (queries/spark/reader_judged.sql).
reader_rows: dict[int, tuple[int, bool]] = {}


def _reader_step(spark: Any, options: Options) -> str | None:
    """The Spark SQL that makes ev_judged_source read the reader's judged rows too, if any."""
    read = reader_rows.get(id(spark))
    if read is None:
        return None
    rel, float32 = read
    if float32 != options.float32_ties:
        raise MetricParamError(
            f"the runs were read by evalwh's reader {'with' if float32 else 'without'} float32 ties; "
            f"load them again with float32_ties={options.float32_ties} to evaluate so"
        )
    name = "reader_judged" if rel == options.rel else "reader_judged_recounted"
    return sql.query("evalwh.queries.spark", name).text.strip().rstrip(";")


# The context's relations the metric queries read, materialised once (the judged rows of
# every run and topic, the run-topic pairs, the qrels and topics they take R and N from);
# every other step stays a lazy view, planned into these.
MATERIALISED = frozenset({"ev_qrels", "ev_topics", "ev_judged", "ev_pairs"})


def build_context(
    spark: Any, collection: str, runs: Sequence[str] | None, options: Options
) -> None:
    """The evaluation context as temporary views of ``spark``; the judged rows materialised.

    A view keeps the analysed plan of its query, so a step may read the relation it
    replaces. The one pass over the ranked runs (rank, join the qrels, keep the judged rows
    with their running counts) happens when ``ev_judged`` is materialised; the metric queries
    then read small, checkpointed relations instead of re-planning the whole chain.
    """
    reader = _reader_step(spark, options)
    for relation, query in context_sql(collection, runs, options, dialect="spark"):
        frame = spark.sql(query)
        if relation in MATERIALISED:
            frame = frame.localCheckpoint(eager=True)
        frame.createOrReplaceTempView(relation)
        if relation == "ev_judged_source" and reader is not None:
            args = {"rel": options.rel} if ":rel" in reader else None
            spark.sql(reader, args=args).createOrReplaceTempView("ev_judged_source")


def _unordered(tree: exp.Expression) -> exp.Expression:
    """A metric query without its final ORDER BY (its rows go into a union, sorted after)."""
    tree = tree.copy()
    tree.set("order", None)
    return tree


def metrics_sql(parsed: Sequence[catalog.Measure], *, dialect: str = "spark") -> str:
    """Every measure's query as ONE statement: ``run_id, query_id, measure_index, value``.

    Each metric query, transpiled and without its ORDER BY, is a subquery of one branch of a
    ``UNION ALL`` that adds the measure's position in ``parsed`` (INT) and casts its value to
    DOUBLE. Spark analyses the statement once; a DataFrame union built a measure at a time
    was analysed again at every step (76 measures: 21-26 JVM CPU seconds of planning, now 7).

    Examples:
        >>> text = metrics_sql([catalog.parse("P@10"), catalog.parse("AP")])
        >>> text.count(" UNION ALL "), "CAST(1 AS INT) AS measure_index" in text
        (1, True)
    """
    branches = []
    for index, measure in enumerate(parsed):
        (tree,) = transpile(measure.metric.file, measure.params, dialect=dialect)
        alias = exp.TableAlias(this=exp.to_identifier(f"measure_{index}"))
        values = exp.Subquery(this=_unordered(tree), alias=alias)
        branches.append(
            exp.select(
                exp.column("run_id"),
                exp.column("query_id"),
                exp.alias_(exp.cast(exp.Literal.number(index), "INT"), "measure_index"),
                exp.alias_(exp.cast(exp.column("value"), "DOUBLE"), "value"),
            ).from_(values)
        )
    union = branches[0] if len(branches) == 1 else exp.union(*branches, distinct=False)
    return union.sql(dialect=dialect)


def metrics_frame(spark: Any, parsed: Sequence[catalog.Measure]) -> Any:
    """Every measure's per-topic values as ONE Spark DataFrame over the built context.

    ``run_id, query_id, measure_index, value``: the statement of :func:`metrics_sql`, planned
    once, so that one job computes every measure (each reads the materialised context).

    The union's partitions (every measure's shuffle partitions) are grouped into one task per
    core (``coalesce``, no shuffle): each task of a stage deserialises the stage's whole plan,
    every measure's, so a task per measure partition made that work grow as the measures
    times their partitions (76 measures on a small collection, local[2]: 27 JVM CPU s for
    the job, 15 grouped). Every core still takes a share of the work after the measures'
    shuffles.
    """
    frame = spark.sql(metrics_sql(parsed, dialect="spark"))
    try:
        cores = int(spark.sparkContext.defaultParallelism)
    except AttributeError:  # (Spark Connect has no SparkContext here: its server plans the tasks)
        return frame
    return frame.coalesce(max(cores, 1))


def measure_values(spark: Any, parsed: Sequence[catalog.Measure], *, typed_names: bool = False) -> Any:
    """:func:`metrics_frame` with each measure's name: ``run_id, query_id, measure, value``."""
    from pyspark.sql import functions as F

    names = [m.name if typed_names else str(m) for m in parsed]
    label = F.element_at(F.array(*[F.lit(n) for n in names]), F.col("measure_index") + 1)
    return metrics_frame(spark, parsed).select("run_id", "query_id", label.alias("measure"), "value")


def _collect(spark: Any, parsed: Sequence[catalog.Measure], *, typed_names: bool) -> pd.DataFrame:
    """Compute every measure in one job and bring the values to the driver as pandas."""
    import pandas as pd

    table = metrics_frame(spark, parsed).toArrow()
    out = pd.DataFrame(
        {
            "run_id": table.column("run_id").to_pylist(),
            "query_id": table.column("query_id").to_pylist(),
            "_order": table.column("measure_index").to_numpy(),
            "value": table.column("value").to_numpy(zero_copy_only=False).astype("float64"),
        }
    )
    names = [m.name if typed_names else str(m) for m in parsed]
    out = out.sort_values(["run_id", "query_id", "_order"], kind="stable")
    out.insert(2, "measure", [names[i] for i in out["_order"]])
    return out.drop(columns="_order").reset_index(drop=True)


def means(per_query: pd.DataFrame) -> pd.DataFrame:
    """Means of a per-topic frame of :func:`evaluate`, by the warehouse's own ``means.sql``.

    Runs in an in-memory DuckDB on the collected frame (one row per run and topic), so the
    means, topic counts and undefined counts are those ``Warehouse.evaluate`` gives.

    Returns:
        ``run_id, measure, value, n_topics, n_undefined``, runs sorted, measures in the
        order of the frame.
    """
    import duckdb

    frame = per_query[["run_id", "query_id", "measure", "value"]].copy()
    frame["aggregate"] = frame["measure"].map(lambda m: catalog.parse(m).metric.aggregate)
    con = duckdb.connect(":memory:")
    try:
        con.register("ev_values", frame)
        out = con.execute(sql.query("evalwh.queries.reports", "means").text).df()
    finally:
        con.close()
    order = {m: i for i, m in enumerate(dict.fromkeys(frame["measure"]))}
    out = out.assign(_order=out["measure"].map(order)).sort_values(["run_id", "_order"], kind="stable")
    return out[["run_id", "measure", "value", "n_topics", "n_undefined"]].reset_index(drop=True)
