-- name: bounds_cells
-- description: One row per (run, topic, depth) of the grid with the prefix sums at the evaluated depth e = min(d, m).
-- params:
-- m is the number retrieved after the depth cap (ev_pairs; 0 for a topic the run lacks).
-- The ASOF join picks the last judged row at or above rank e; with none (no judged document
-- in the top e) every count is 0. unjudged = e - relevant - nonrelevant; the d - e MISSING
-- positions are not in it (they stay non-relevant in the scenarios, unknown in the bounds).
-- A view: each family reads only the columns it needs.
CREATE OR REPLACE TEMP VIEW ref_cells AS
WITH grid AS (
    SELECT
        pr.run_id,
        pr.query_id,
        pr.num_rel,
        d.depth,
        least(d.depth, pr.num_ret) AS evaluated
    FROM ev_pairs AS pr
    CROSS JOIN ref_depths AS d
)
SELECT
    g.run_id,
    g.query_id,
    g.depth,
    g.evaluated,
    g.num_rel,
    coalesce(x.rel_so_far, 0) AS relevant,
    coalesce(x.nonrel_so_far, 0) AS nonrelevant,
    g.evaluated - coalesce(x.rel_so_far, 0) - coalesce(x.nonrel_so_far, 0) AS unjudged,
    coalesce(x.rbp_rel_weight, 0.0) AS rbp_rel_weight,
    coalesce(x.rbp_nonrel_weight, 0.0) AS rbp_nonrel_weight,
    coalesce(x.dcg, 0.0) AS dcg,
    coalesce(x.judged_discount, 0.0) AS judged_discount,
    coalesce(x.precision_sum, 0.0) AS precision_sum,
    coalesce(x.nonrel_precision_sum, 0.0) AS nonrel_precision_sum,
    coalesce(x.nonrel_harmonic_sum, 0.0) AS nonrel_harmonic_sum
FROM grid AS g
ASOF LEFT JOIN ref_positions AS x
    ON x.run_id = g.run_id
    AND x.query_id = g.query_id
    AND g.evaluated >= x.rank;
