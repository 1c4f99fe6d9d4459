-- name: budget_ndcg
-- description: nDCG of every run under each simulated label set of a budget replay, the ideal ranking from that set's own labels.
-- params: k INTEGER
-- The set-wise counterpart of queries/metrics/ndcg.sql (same gain: the grade itself; same
-- discount log2(rank + 1); cut at $k, the whole list when NULL). ndcg.sql reads its ideal
-- ranking from the shared ev_qrels; here each evaluation key (label_id || TAB || run_id, as
-- budget_judged.sql builds it) takes its ideal from the labels of its own set, so a budget's
-- nDCG is what trec_eval would print with that set as the qrels. Topics are ev_topics (the
-- reference's topics with a relevant document), as for the other measures of a replay.
WITH gains AS (
    SELECT run_id, query_id, sum(gain / log2(rank + 1)) AS dcg
    FROM ev_judged
    WHERE gain > 0 AND ($k IS NULL OR rank <= $k)
    GROUP BY run_id, query_id
),
ideal_ranks AS (
    SELECT
        l.label_id,
        l.query_id,
        l.relevance AS gain,
        row_number() OVER (PARTITION BY l.label_id, l.query_id ORDER BY l.relevance DESC) AS ideal_rank
    FROM ev_budget_labels AS l
    SEMI JOIN ev_topics AS t USING (query_id)
    WHERE l.relevance > 0
),
ideal AS (
    SELECT label_id, query_id, sum(gain / log2(ideal_rank + 1)) AS idcg
    FROM ideal_ranks
    WHERE $k IS NULL OR ideal_rank <= $k
    GROUP BY label_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    coalesce(g.dcg / i.idcg, 0.0) AS value
FROM ev_pairs AS p
LEFT JOIN gains AS g USING (run_id, query_id)
LEFT JOIN ideal AS i ON i.label_id = split_part(p.run_id, chr(9), 1) AND i.query_id = p.query_id
ORDER BY p.run_id, p.query_id;
