-- name: eval_judged
-- description: The judged documents of each ranked list with running counts: the only result rows any metric reads.
-- params: depth_cap INTEGER
-- Every metric in queries/metrics/ is computed from these rows plus per-list counts
-- (ev_pairs): unjudged documents matter only through the number retrieved, so they are
-- never joined, sorted or carried. The depth cap (trec_eval -M) applies first.
-- The running counts do not depend on a metric's depth k (they count rows *above*), so
-- they are computed here once, in one window pass, for AP, bpref, RankEff and AA alike:
--   relevant_so_far    relevant documents at or above this rank
--   judged_so_far      judged documents at or above this rank
--   nonrelevant_above  judged non-relevant documents strictly above this rank (bpref's c)
CREATE OR REPLACE TEMP TABLE ev_judged AS
WITH judged AS (
    SELECT r.run_id, r.query_id, r.rank, q.gain, q.is_rel
    FROM ev_ranked AS r
    JOIN ev_qrels AS q USING (query_id, doc_id)
    SEMI JOIN ev_topics AS t USING (query_id)
    WHERE r.rank <= $depth_cap
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
