-- name: spec_judged
-- description: Judgments of many simulated pools at once: each evaluation key scores one run against the parent qrels restricted to the pool of its own member runs.
-- params: collection_id VARCHAR, depth INTEGER, max_rank INTEGER
-- Needs ev_pool_spec (eval_id, run_id, member_id: one row per member of the pool that
-- evaluation eval_id scores run_id against), and ev_qrels, ev_topics built on the parent qrels
-- (queries/context). This is Q^S_t = Q_t restricted to Pool_lambda(S, t) (methods §5.1) for
-- many S side by side, e.g. Pool_lambda(S + {r}) and Pool_lambda(S) of every sampled pool of an
-- experiment, so that all unpooled scores come from one set-wise pass. The evaluation key takes
-- the place of run_id in ev_judged and ev_pairs, so the metric queries run unchanged.
-- $max_rank keeps only ranks up to that depth; NULL keeps every rank.
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

CREATE OR REPLACE TEMP TABLE ev_judged AS
WITH evals AS (
    SELECT DISTINCT eval_id, run_id FROM ev_pool_spec
),
judged AS (
    SELECT e.eval_id AS run_id, r.query_id, r.rank, q.gain, q.is_rel
    FROM evals AS e
    JOIN run_results AS r ON r.collection_id = $collection_id AND r.run_id = e.run_id
    JOIN ev_qrels AS q ON q.query_id = r.query_id AND q.doc_id = r.doc_id
    SEMI JOIN ev_pool_docs AS d
        ON d.eval_id = e.eval_id AND d.query_id = r.query_id AND d.doc_id = r.doc_id
    WHERE $max_rank IS NULL OR r.rank <= $max_rank
),
running AS (
    SELECT
        run_id,
        query_id,
        rank,
        gain,
        is_rel,
        CAST(count(*) FILTER (WHERE is_rel) OVER w AS INTEGER) AS relevant_so_far,
        CAST(count(*) OVER w AS INTEGER) AS judged_so_far
    FROM judged
    WINDOW w AS (PARTITION BY run_id, query_id ORDER BY rank ROWS UNBOUNDED PRECEDING)
)
SELECT
    run_id,
    query_id,
    rank,
    gain,
    is_rel,
    relevant_so_far,
    judged_so_far,
    judged_so_far - relevant_so_far - CASE WHEN is_rel THEN 0 ELSE 1 END AS nonrelevant_above
FROM running;

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
