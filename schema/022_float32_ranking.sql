-- trec_ranked (schema/001_core.sql) with float32_ties rounds a score the way C does
-- (float32_score, schema/021): 001 cast the double to FLOAT, which DuckDB refuses from
-- 3.4028235677973366e38 on (2^128 - 2^103, half an ulp above float32's largest value),
-- so `eval --float32-ties` on a run with a score like 1e39 failed. trec_eval <= 9.0.8 read
-- such a score into a C float, which rounds it to +inf or -inf (IEEE 754 round to
-- nearest): all of a list's scores at or beyond that magnitude, one sign, tie there and
-- come doc_id descending, the positive ones above every finite score, the negative ones
-- below. The order is otherwise 001's, unchanged; scores are finite (NaN and infinities
-- are refused at ingest), so float32_score never sees a NaN.
CREATE OR REPLACE MACRO trec_ranked(results, float32_ties) AS TABLE
    SELECT
        *,
        CAST(row_number() OVER (
            PARTITION BY run_id, query_id, collection_id
            ORDER BY
                CASE WHEN float32_ties THEN CAST(float32_score(score) AS DOUBLE) ELSE score END DESC,
                doc_id DESC
        ) AS INTEGER) AS rank
    FROM query_table(results);
