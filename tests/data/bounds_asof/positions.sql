-- name: bounds_positions
-- description: The judged positions of every evaluated list down to the deepest depth of the grid, with the running sums every bound family reads, plus a table of prefix sums over ranks.
-- params: max_depth INTEGER, p DOUBLE
-- Only judged rows (ev_judged) are read, as every metric does: the unjudged positions of
-- the top e = min(d, m) are e - relevant - non-relevant, and their contributions to the
-- optimistic scenario (methods §3.3) are closed forms over ranks, read from ref_rank_sums:
--   harmonic(n) = sum_{k <= n} 1/k          discount(n) = sum_{k <= n} 1/log2(k + 1)
-- Every column of ref_positions is a prefix quantity "at or above this judged rank", so the
-- value at depth d is the last judged row at or above rank e (one ASOF join per cell).
--   rel_so_far, nonrel_so_far          relevant / judged non-relevant documents
--   rbp_rel_weight, rbp_nonrel_weight  sum of p^(rank - 1) over relevant / non-relevant ranks
--   dcg                                sum of gain / log2(rank + 1)
--   judged_discount                    sum of 1 / log2(rank + 1) over judged ranks
--   precision_sum                      sum of precision at each relevant rank (AP numerator)
--   nonrel_precision_sum               sum over non-relevant ranks j of (j - N_j) / j
--   nonrel_harmonic_sum                sum over non-relevant ranks j of harmonic(j - 1)
-- (N_j = non-relevant documents at or above j.) The last two give AP_allrel's numerator.
CREATE OR REPLACE TEMP TABLE ref_rank_sums AS
SELECT
    n,
    sum(CASE WHEN n = 0 THEN 0.0 ELSE 1.0 / n END) OVER w AS harmonic,
    sum(CASE WHEN n = 0 THEN 0.0 ELSE 1.0 / log2(n + 1) END) OVER w AS discount
FROM (SELECT range AS n FROM range(0, $max_depth + 1))
WINDOW w AS (ORDER BY n ROWS UNBOUNDED PRECEDING);

CREATE OR REPLACE TEMP TABLE ref_positions AS
WITH judged AS (
    SELECT
        j.run_id,
        j.query_id,
        j.rank,
        j.gain,
        j.is_rel,
        j.relevant_so_far AS rel_so_far,
        j.judged_so_far - j.relevant_so_far AS nonrel_so_far,
        h.harmonic AS harmonic_above  -- harmonic(rank - 1)
    FROM ev_judged AS j
    JOIN ref_rank_sums AS h ON h.n = j.rank - 1
    WHERE j.rank <= $max_depth
)
SELECT
    run_id,
    query_id,
    rank,
    rel_so_far,
    nonrel_so_far,
    sum(CASE WHEN is_rel THEN pow($p, rank - 1) ELSE 0.0 END) OVER w AS rbp_rel_weight,
    sum(CASE WHEN is_rel THEN 0.0 ELSE pow($p, rank - 1) END) OVER w AS rbp_nonrel_weight,
    sum(gain / log2(rank + 1)) OVER w AS dcg,
    sum(1.0 / log2(rank + 1)) OVER w AS judged_discount,
    sum(CASE WHEN is_rel THEN rel_so_far / rank ELSE 0.0 END) OVER w AS precision_sum,
    sum(CASE WHEN is_rel THEN 0.0 ELSE (rank - nonrel_so_far) / rank END) OVER w AS nonrel_precision_sum,
    sum(CASE WHEN is_rel THEN 0.0 ELSE harmonic_above END) OVER w AS nonrel_harmonic_sum
FROM judged
WINDOW w AS (PARTITION BY run_id, query_id ORDER BY rank ROWS UNBOUNDED PRECEDING);
