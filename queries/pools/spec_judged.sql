-- name: spec_judged
-- description: Judgments of many simulated pools at once: each evaluation key scores one run against the parent qrels restricted to the pool of its own member runs.
-- params: collection_id VARCHAR, depth INTEGER
-- Needs ev_pool_spec (eval_id, run_id, member_id: one row per member of the pool that
-- evaluation eval_id scores run_id against), ev_qrels and ev_topics built on the parent qrels,
-- and ev_ranked (queries/context). This is Q^S_t = Q_t restricted to Pool_lambda(S, t)
-- (methods §5.1) for many S side by side, e.g. Pool_lambda(S + {r}) and Pool_lambda(S) of
-- every sampled pool of an experiment, so that all unpooled scores come from one set-wise
-- pass. The evaluation key takes the place of run_id in ev_judged and ev_pairs, so the metric
-- queries run unchanged.
-- Leaves ev_pool_rows for queries/pools/judged.sql, which builds ev_judged, and ev_eval_counts.
CREATE OR REPLACE TEMP TABLE ev_pool_docs AS
WITH member_tops AS (
    SELECT r.run_id, r.query_id, r.doc_id
    FROM run_results AS r
    SEMI JOIN (SELECT DISTINCT member_id AS run_id FROM ev_pool_spec) AS m USING (run_id)
    SEMI JOIN ev_topics AS t USING (query_id)
    WHERE r.collection_id = $collection_id AND r.rank <= $depth
)
SELECT DISTINCT s.eval_id, m.query_id, m.doc_id
FROM ev_pool_spec AS s
JOIN member_tops AS m ON m.run_id = s.member_id;

-- the judged rows of each evaluation: its run's list against the parent qrels restricted to
-- the evaluation's pool (ev_ranked holds every run and member named in ev_pool_spec);
-- queries/pools/judged.sql (pool_judged) cuts them at $max_rank and adds the running counts
CREATE OR REPLACE TEMP VIEW ev_pool_rows AS
SELECT e.eval_id AS run_id, r.query_id, r.rank, q.gain, q.is_rel
FROM (SELECT DISTINCT eval_id, run_id FROM ev_pool_spec) AS e
JOIN ev_ranked AS r ON r.run_id = e.run_id
JOIN ev_qrels AS q ON q.query_id = r.query_id AND q.doc_id = r.doc_id
SEMI JOIN ev_pool_docs AS d
    ON d.eval_id = e.eval_id AND d.query_id = r.query_id AND d.doc_id = r.doc_id;

-- R and N of each simulated pool's qrels; T stays the parent's topic set
CREATE OR REPLACE TEMP TABLE ev_eval_counts AS
WITH counts AS (
    SELECT
        d.eval_id,
        d.query_id,
        count(*) FILTER (WHERE q.is_rel) AS num_rel,
        count(*) FILTER (WHERE NOT q.is_rel) AS num_nonrel
    FROM ev_pool_docs AS d
    JOIN ev_qrels AS q USING (query_id, doc_id)
    GROUP BY d.eval_id, d.query_id
)
SELECT
    e.eval_id AS run_id,
    e.run_id AS source_run_id,
    t.query_id,
    CAST(coalesce(c.num_rel, 0) AS INTEGER) AS num_rel,
    CAST(coalesce(c.num_nonrel, 0) AS INTEGER) AS num_nonrel
FROM (SELECT DISTINCT eval_id, run_id FROM ev_pool_spec) AS e
CROSS JOIN ev_topics AS t
LEFT JOIN counts AS c ON c.eval_id = e.eval_id AND c.query_id = t.query_id;
