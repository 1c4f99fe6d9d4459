-- Where rounding scores to float32 (trec_eval <= 9.0.8) would reorder a run, found once at
-- ingest instead of at every evaluation (docs/report.md, float32 ties).
--
-- trec_eval 10 orders a list by score (double) descending, then doc_id descending; trec_eval
-- 9 read scores into a C float, so two adjacent rows whose scores differ as doubles but not
-- as floats tie there and come doc_id descending: they trade places when doc_id ascends in
-- trec_eval 10's order. Per run:
--   float32_lists       the lists (topics) with such a pair; 0: none; NULL: not known (the
--                       run was stored before this step, or by a path that does not count)
--   float32_first_rank  the best rank of the second row of such a pair (NULL when none)
-- The ingest's reader (evalwh/io/_runlines.c) counts them as it ranks; runs stored the
-- general way or from a DataFrame get them from queries/reports/float32_order.sql, which
-- is also what `eval`, `compare` and `report` run for the runs whose figures are NULL.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS float32_lists INTEGER;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS float32_first_rank INTEGER;

-- A score as a C float: DuckDB refuses to cast a double whose float is infinite (from
-- 3.4028235677973366e38 on), where C rounds to an infinity.
CREATE OR REPLACE MACRO float32_score(score) AS
    CASE
        WHEN abs(score) >= 3.4028235677973366e38 THEN CAST(sign(score) * 'inf'::DOUBLE AS FLOAT)
        ELSE CAST(score AS FLOAT)
    END;

COMMENT ON COLUMN runs.float32_lists IS 'lists (topics) whose order changes when scores are rounded to float32, as trec_eval 9 did (0: none; NULL: not known, stored before schema 021)';
COMMENT ON COLUMN runs.float32_first_rank IS 'the best rank where float32 scores reorder the run (NULL when none)';
