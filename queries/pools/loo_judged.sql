-- name: loo_judged
-- description: Leave-one-out judgments of every member of a pool at once: the withdrawn documents, the judged rows and R, N per run.
-- params: collection_id VARCHAR, pool_id VARCHAR, depth INTEGER, new_run VARCHAR, by_group BOOLEAN
-- Needs ev_runs (the pool's members), ev_qrels and ev_topics (built on the pool's qrels) and
-- ev_ranked from queries/context. Leave-one-out re-pooling as set operations over ranks
-- (methods §5.3): removing run s from the pool withdraws exactly the documents only s has in its
-- top lambda; a document s has below lambda, or that another member has in its top lambda,
-- stays judged. With $new_run (Webber & Park's refinement, Q^{-s+r}) the new run takes the
-- left-out run's place, so a document in the new run's top lambda stays judged too. With
-- $by_group the unit left out is the run's participant group (Zobel 1998): all its runs.
-- Leaves ev_pool_rows for queries/pools/judged.sql, which builds ev_judged, and ev_eval_counts.
CREATE OR REPLACE TEMP TABLE ev_loo_removed AS
WITH members AS (
    SELECT
        e.run_id,
        CASE WHEN $by_group THEN coalesce(ru.group_name, ru.run_id) ELSE ru.run_id END AS unit
    FROM ev_runs AS e
    JOIN runs AS ru USING (collection_id, run_id)
),
tops AS (
    SELECT DISTINCT m.unit, r.query_id, r.doc_id
    FROM ev_ranked AS r
    JOIN members AS m USING (run_id)
    SEMI JOIN ev_topics AS t USING (query_id)
    WHERE r.rank <= $depth
),
contributors AS (
    SELECT query_id, doc_id, count(*) AS n_units
    FROM tops
    GROUP BY query_id, doc_id
),
kept_by_new_run AS (
    SELECT query_id, doc_id
    FROM run_results
    WHERE collection_id = $collection_id AND run_id = $new_run AND rank <= $depth
)
-- one row per (member run, topic, document) that leaving out the run's unit withdraws
SELECT m.run_id, t.query_id, t.doc_id
FROM tops AS t
JOIN contributors AS c USING (query_id, doc_id)
JOIN members AS m USING (unit)
ANTI JOIN kept_by_new_run AS k USING (query_id, doc_id)
WHERE c.n_units = 1;

-- the judged rows of each member's list against its own leave-one-out qrels: the pool's
-- judgments less what leaving the member out withdrew; queries/pools/judged.sql (pool_judged)
-- cuts them at $max_rank and adds the running counts
CREATE OR REPLACE TEMP VIEW ev_pool_rows AS
SELECT r.run_id, r.query_id, r.rank, q.gain, q.is_rel
FROM ev_ranked AS r
JOIN ev_qrels AS q USING (query_id, doc_id)
SEMI JOIN ev_topics AS t USING (query_id)
ANTI JOIN ev_loo_removed AS x USING (run_id, query_id, doc_id);

-- R and N of each run's own leave-one-out qrels: the pool's, less what leaving it out withdrew
CREATE OR REPLACE TEMP TABLE ev_eval_counts AS
WITH withdrawn AS (
    SELECT
        x.run_id,
        x.query_id,
        count(*) FILTER (WHERE q.is_rel) AS num_rel,
        count(*) FILTER (WHERE NOT q.is_rel) AS num_nonrel
    FROM ev_loo_removed AS x
    JOIN ev_qrels AS q USING (query_id, doc_id)
    GROUP BY x.run_id, x.query_id
)
SELECT
    e.run_id,
    e.run_id AS source_run_id,
    t.query_id,
    CAST(t.num_rel - coalesce(w.num_rel, 0) AS INTEGER) AS num_rel,
    CAST(t.num_nonrel - coalesce(w.num_nonrel, 0) AS INTEGER) AS num_nonrel
FROM ev_runs AS e
CROSS JOIN ev_topics AS t
LEFT JOIN withdrawn AS w ON w.run_id = e.run_id AND w.query_id = t.query_id;
