-- name: run_table_rows
-- description: The rows of run tables (Parquet in the warehouse's layout) with each row's first problem, NULL when good.
-- params:
-- Spark SQL over spark_run_table: file_index, row_number (from 1, the row's position in its
-- file: Parquet's _metadata.row_index), run_id, query_id, doc_id, score. The checks of
-- evalwh.store.ingest.frames.ingest_run_frame: a finite score (NULL is none), then no document twice for
-- a topic in a run; a NULL key is refused as an empty field. The first bad row (by file,
-- then row) is what the error names.
WITH ordered AS (
    SELECT
        *,
        min(struct(file_index, row_number)) OVER (PARTITION BY run_id, query_id, doc_id) AS first_of_doc
    FROM spark_run_table
)
SELECT
    *,
    CASE
        WHEN run_id IS NULL OR query_id IS NULL OR doc_id IS NULL THEN 'key'
        WHEN score IS NULL OR isnan(score) OR abs(score) > 1.7976931348623157E308D THEN 'score'
        WHEN struct(file_index, row_number) <> first_of_doc THEN 'duplicate'
    END AS kind
FROM ordered;
