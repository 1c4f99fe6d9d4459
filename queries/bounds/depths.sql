-- name: bounds_depths
-- description: The parameters and depth grid of a bounds computation: one row per depth d, numbered, and for every rank the number of grid depths below it.
-- params: depths INTEGER[], max_depth INTEGER, p DOUBLE, allrel_gain INTEGER
-- bd_key is a one-row table of the measure's parameters (RBP's persistence p, the gain of a
-- relabelled document in nDCG_allrel), joined by the family views, since a view cannot
-- take parameters (as ev_key in queries/context).
-- "Every rank to 1000" is just the grid 1, 2, ..., 1000; nothing below loops over depths.
-- The grid depths are numbered 1..G (cell). bd_grid_below maps a rank k in 0..max_depth + 1
-- to the number of grid depths d < k, so the grid depths in a span of ranks [a, b) are the
-- cells below(a) + 1 .. below(b): queries/bounds/cells.sql expands spans with it, without
-- a join that compares every rank with every depth.
CREATE OR REPLACE TEMP TABLE bd_key AS
SELECT CAST($p AS DOUBLE) AS p, CAST($allrel_gain AS INTEGER) AS allrel_gain;

CREATE OR REPLACE TEMP TABLE bd_depths AS
SELECT
    CAST(row_number() OVER (ORDER BY depth) AS INTEGER) AS cell,
    depth
FROM (SELECT DISTINCT CAST(unnest($depths) AS INTEGER) AS depth)
ORDER BY depth;

CREATE OR REPLACE TEMP TABLE bd_grid_below AS
SELECT
    CAST(k.range AS INTEGER) AS rank,
    CAST(count(d.depth) AS INTEGER) AS below
FROM range(0, $max_depth + 2) AS k
LEFT JOIN bd_depths AS d ON d.depth < k.range
GROUP BY k.range;
