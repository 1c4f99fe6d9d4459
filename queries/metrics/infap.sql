-- name: infAP
-- description: Inferred AP (Yilmaz & Aslam): AP estimated from a judged sample of the pool; equals AP when the pool is fully judged.
-- params:
-- trec_eval: infAP
-- kind: performance
-- range: 0, 1
-- reference: Yilmaz & Aslam, CIKM 2006; trec_eval m_infap.c
-- A relevant document at rank r > 1 contributes 1/r + ((r-1)/r)·(d/(r-1))·((rel + e)/(rel +
-- nonrel + 2e)), where d is the number of pooled documents above it (judged or pooled but not
-- judged: a negative grade), rel and nonrel the judged relevant and non-relevant documents
-- above it, e = 0.00001; at rank 1 it contributes 1. The sum is divided by R. Documents
-- outside the pool (not in the qrels) count neither way.
WITH pool_unjudged AS (
    -- retrieved documents with a negative grade (pooled, not judged): ev_judged leaves them
    -- out, so they come from the ranked lists (ev_ranked) and the qrels set itself. Without
    -- ranked lists (evalwh.measures.direct's reader) none are seen: there, such a document counts as
    -- outside the pool. Condensed lists (-J) have none.
    SELECT r.run_id, r.query_id, r.rank
    FROM ev_ranked AS r
    CROSS JOIN ev_key AS k
    JOIN qrels AS q
        ON q.collection_id = k.collection_id AND q.qrels_id = k.qrels_id
        AND q.query_id = r.query_id AND q.doc_id = r.doc_id
    WHERE q.relevance < 0 AND r.rank <= k.depth_cap AND NOT k.condensed
),
relevant AS (
    SELECT j.run_id, j.query_id, j.rank, j.relevant_so_far, j.nonrelevant_above
    FROM ev_judged AS j
    WHERE j.is_rel
),
unjudged_above AS (
    SELECT r.run_id, r.query_id, r.rank, count(*) AS unjudged
    FROM relevant AS r
    JOIN pool_unjudged AS u ON u.run_id = r.run_id AND u.query_id = r.query_id AND u.rank < r.rank
    GROUP BY r.run_id, r.query_id, r.rank
),
terms AS (
    SELECT
        r.run_id,
        r.query_id,
        sum(
            CASE
                WHEN r.rank = 1 THEN 1.0
                ELSE 1.0 / r.rank
                    + ((r.rank - 1.0) / r.rank)
                    * ((r.relevant_so_far - 1 + r.nonrelevant_above + coalesce(u.unjudged, 0)) / (r.rank - 1.0))
                    * ((r.relevant_so_far - 1 + 0.00001) / (r.relevant_so_far - 1 + r.nonrelevant_above + 2 * 0.00001))
            END
            ORDER BY r.rank
        ) AS term_sum
    FROM relevant AS r
    LEFT JOIN unjudged_above AS u USING (run_id, query_id, rank)
    GROUP BY r.run_id, r.query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE WHEN p.num_rel = 0 THEN 0.0 ELSE coalesce(t.term_sum, 0) / p.num_rel END AS value
FROM ev_pairs AS p
LEFT JOIN terms AS t USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
