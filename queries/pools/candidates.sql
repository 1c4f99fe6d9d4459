-- name: pool_candidates
-- description: One row per candidate (topic, document) of a pool: the union of the members' top lambda, with what the ordering strategies read.
-- params: collection_id VARCHAR, parent_qrels_id VARCHAR, depth INTEGER, runs VARCHAR[], rel DOUBLE, rbp_p DOUBLE, rrf_k DOUBLE
-- The candidates are Pool_lambda(S, t) of methods §5.1 (trec_eval order, read from the rank
-- materialised at ingest; only topics of the parent set). Per document:
--   best_rank   the best (smallest) rank any member gives it: the depth order judges rank 1
--               of every run first, then rank 2, ...
--   n_runs      how many members have it in their top lambda (ties of the depth order)
--   rbp_weight  sum over members of (1 - p) p^(rank - 1): Moffat, Webber and Zobel's
--               rank-biased weight of the document (SIGIR 2007), p = $rbp_p
--   rrf_weight  sum over members of 1 / ($rrf_k + rank): reciprocal rank fusion
--               (Cormack, Clarke and Buettcher, SIGIR 2009)
--   relevant    the parent's grade >= $rel (revealed to the sequential strategies during a
--               replay); a candidate the parent does not judge counts as not relevant
-- Both weights are summed in rank order: a parallel sum adds in whatever order the threads
-- finish, so two documents of the same ranks could differ in the last bit from one run to the
-- next and trade places in the rbp and rrf orders (seen on TREC-8's pool).
WITH parent AS (
    SELECT query_id, doc_id, relevance
    FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $parent_qrels_id
),
tops AS (
    SELECT r.query_id, r.doc_id, r.rank
    FROM run_results AS r
    SEMI JOIN (SELECT DISTINCT query_id FROM parent) AS t USING (query_id)
    WHERE r.collection_id = $collection_id
      AND list_contains($runs, r.run_id)
      AND r.rank <= $depth
)
SELECT
    t.query_id,
    t.doc_id,
    min(t.rank) AS best_rank,
    count(*) AS n_runs,
    sum((1 - $rbp_p) * pow($rbp_p, t.rank - 1) ORDER BY t.rank) AS rbp_weight,
    sum(1.0 / ($rrf_k + t.rank) ORDER BY t.rank) AS rrf_weight,
    coalesce(any_value(p.relevance) >= $rel, false) AS relevant
FROM tops AS t
LEFT JOIN parent AS p USING (query_id, doc_id)
GROUP BY t.query_id, t.doc_id
ORDER BY t.query_id, t.doc_id;
