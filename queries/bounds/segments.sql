-- name: bounds_segments
-- description: The spans of bd_positions with the counts only, for the families that need no rank-weighted sums (P, R).
-- params:
-- Precision masses and recall read the running counts that ev_judged already carries, so
-- no window is computed here. The rank-weighted sums of queries/bounds/segments_running.sql
-- are NULL: not computed for these families.
CREATE OR REPLACE TEMP VIEW bd_segments AS
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
    CAST(NULL AS DOUBLE) AS rbp_rel_weight,
    CAST(NULL AS DOUBLE) AS rbp_nonrel_weight,
    CAST(NULL AS DOUBLE) AS dcg,
    CAST(NULL AS DOUBLE) AS judged_discount,
    CAST(NULL AS DOUBLE) AS precision_sum,
    CAST(NULL AS DOUBLE) AS nonrel_precision_sum,
    CAST(NULL AS DOUBLE) AS nonrel_harmonic_sum
FROM bd_positions;
