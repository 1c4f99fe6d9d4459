"""The warehouse as storage: one DuckDB file, its schema, what goes in and what comes out.

Owns: the connection, migrations and transactions (:mod:`.connection`, class
:class:`~evalwh.store.connection.Store`), the ingest of runs, qrels and run metadata and the
judged-rows cache it fills (:mod:`.ingest`), the evaluation context that reads stored rows
for the measures (:mod:`.context`), results as DataFrames and the default qrels set
(:mod:`.results`), Parquet export and import (:mod:`.transfer`) and ad-hoc
SQL on a guarded connection (:mod:`.adhoc`).

May import: :mod:`evalwh.io`, :mod:`evalwh.errors`, :mod:`evalwh.sql`. The public class
with every job, :class:`evalwh.Warehouse`, builds on :class:`~evalwh.store.connection.Store`
from above.
"""
