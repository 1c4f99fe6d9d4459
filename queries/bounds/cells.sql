-- name: bounds_cells
-- description: One row per (list, depth) of the grid with the prefix sums at the evaluated depth e = min(d, m), expanded from the spans of bd_segments.
-- params:
-- Each span of bd_segments holds the values of the grid depths in [its rank, next judged
-- rank): unnest turns it into those cells directly, so no cell is matched against the
-- judged rows (no ASOF join, no sort). m is the number retrieved after the depth cap (0 for
-- a topic the run lacks). unjudged = e - relevant - nonrelevant; the d - e MISSING positions
-- are not in it (they stay non-relevant in the scenarios, unknown in the bounds).
-- A view: the cells are never stored; the family views and the aggregates stream them.
CREATE OR REPLACE TEMP VIEW bd_cells AS
WITH spans AS (
    SELECT
        list_id,
        run_no,
        num_ret,
        num_rel,
        relevant,
        nonrelevant,
        rbp_rel_weight,
        rbp_nonrel_weight,
        dcg,
        judged_discount,
        precision_sum,
        nonrel_precision_sum,
        nonrel_harmonic_sum,
        unnest(range(first_cell, end_cell)) AS cell
    FROM bd_segments
    WHERE end_cell > first_cell
)
SELECT
    s.list_id,
    s.run_no,
    g.depth,
    least(g.depth, s.num_ret) AS evaluated,
    s.num_rel,
    s.relevant,
    s.nonrelevant,
    least(g.depth, s.num_ret) - s.relevant - s.nonrelevant AS unjudged,
    s.rbp_rel_weight,
    s.rbp_nonrel_weight,
    s.dcg,
    s.judged_discount,
    s.precision_sum,
    s.nonrel_precision_sum,
    s.nonrel_harmonic_sum
FROM spans AS s
JOIN bd_depths AS g ON g.cell = s.cell;
