-- name: bounds_segments_running
-- description: The spans of bd_positions with the rank-weighted prefix sums that RBP, AP and nDCG need, in one window pass over the judged positions.
-- params:
-- The counts (relevant, nonrelevant) come with ev_judged; sums of rank-dependent weights do
-- not, so they are accumulated here, once per list, over the judged positions only (a few
-- per cent of the cells). Every column is a prefix quantity "at or above this judged rank";
-- the row at rank 0 (the empty prefix) adds nothing to any sum.
--   rbp_rel_weight, rbp_nonrel_weight  sum of p^(rank - 1) over relevant / non-relevant ranks
--   dcg                                sum of gain / log2(rank + 1)
--   judged_discount                    sum of 1 / log2(rank + 1) over judged ranks
--   precision_sum                      sum of precision at each relevant rank (AP numerator)
--   nonrel_precision_sum               sum over non-relevant ranks j of (j - N_j) / j
--   nonrel_harmonic_sum                sum over non-relevant ranks j of harmonic(j - 1)
-- (N_j = non-relevant documents at or above j.) The last two give AP_allrel's numerator.
-- A view, like bd_segments of queries/bounds/segments.sql: the window is evaluated inside
-- the one query that reads the cells, and DuckDB drops the sums a family does not read
-- (RBP and nDCG read two of the seven, AP three), so each family pays for its own only.
CREATE OR REPLACE TEMP VIEW bd_segments AS
WITH terms AS (
    SELECT
        p.list_id,
        p.run_no,
        p.num_ret,
        p.num_rel,
        p.rank,
        p.first_cell,
        p.end_cell,
        p.relevant,
        p.nonrelevant,
        CASE WHEN p.is_rel THEN pow(k.p, p.rank - 1) ELSE 0.0 END AS rbp_rel_term,
        CASE WHEN NOT p.is_rel THEN pow(k.p, p.rank - 1) ELSE 0.0 END AS rbp_nonrel_term,
        CASE WHEN p.rank = 0 THEN 0.0 ELSE p.gain / log2(p.rank + 1) END AS dcg_term,
        CASE WHEN p.rank = 0 THEN 0.0 ELSE 1.0 / log2(p.rank + 1) END AS discount_term,
        CASE WHEN p.is_rel THEN p.relevant / p.rank ELSE 0.0 END AS precision_term,
        CASE
            WHEN NOT p.is_rel THEN (p.rank - p.nonrelevant) / p.rank ELSE 0.0
        END AS nonrel_precision_term,
        CASE WHEN NOT p.is_rel THEN h.harmonic ELSE 0.0 END AS nonrel_harmonic_term
    FROM bd_positions AS p
    CROSS JOIN bd_key AS k  -- RBP's persistence p
    LEFT JOIN bd_rank_sums AS h ON h.n = p.rank - 1  -- harmonic(rank - 1)
)
SELECT
    list_id,
    run_no,
    num_ret,
    num_rel,
    rank,
    first_cell,
    end_cell,
    relevant,
    nonrelevant,
    sum(rbp_rel_term) OVER w AS rbp_rel_weight,
    sum(rbp_nonrel_term) OVER w AS rbp_nonrel_weight,
    sum(dcg_term) OVER w AS dcg,
    sum(discount_term) OVER w AS judged_discount,
    sum(precision_term) OVER w AS precision_sum,
    sum(nonrel_precision_term) OVER w AS nonrel_precision_sum,
    sum(nonrel_harmonic_term) OVER w AS nonrel_harmonic_sum
FROM terms
WINDOW w AS (PARTITION BY list_id ORDER BY rank ROWS UNBOUNDED PRECEDING);
