-- name: bounds_positions
-- description: The evaluated lists and their judged positions down to the deepest depth of the grid, each with the span of depths at which it is the deepest judged position, plus prefix sums over ranks.
-- params: max_depth INTEGER
-- Only judged rows (ev_judged) are read, as every metric does, and ev_judged already carries
-- each list's running counts relevant_so_far and judged_so_far. At depth d a list is
-- evaluated on its top e = min(d, m) (m = number retrieved), so its counts at depth d are
-- those of its deepest judged row at or above rank e. Rather than looking that row up for
-- every (list, depth) cell, each judged row is given the span of depths it answers for:
-- from its own rank to just before the next judged rank of the list (or to max_depth for
-- the last one). As every judged rank is <= m, d < next rank implies e = d, and past the
-- last judged rank e >= that rank whatever m is, so the span does not depend on m. A row
-- at rank 0 per list stands for the empty prefix (no judged document yet: counts 0).
-- The next judged rank is an equi-join on judged_so_far + 1, not a window: no sort.
--   bd_rank_sums   harmonic(n) = sum_{k <= n} 1/k, discount(n) = sum_{k <= n} 1/log2(k + 1)
--   bd_lists       one row per evaluated (run, topic), numbered (list_id, run_no) so that
--                  the millions of cells below carry integers, not run and topic names
--   bd_positions   one row per judged position (plus rank 0) with its span of grid cells
--                  [first_cell, end_cell) (cells of bd_depths; empty when no grid depth
--                  falls in the span), relevant / nonrelevant = counts at or above it
CREATE OR REPLACE TEMP TABLE bd_rank_sums AS
SELECT
    n,
    sum(CASE WHEN n = 0 THEN 0.0 ELSE 1.0 / n END) OVER w AS harmonic,
    sum(CASE WHEN n = 0 THEN 0.0 ELSE 1.0 / log2(n + 1) END) OVER w AS discount
FROM (SELECT range AS n FROM range(0, $max_depth + 1))
WINDOW w AS (ORDER BY n ROWS UNBOUNDED PRECEDING);

CREATE OR REPLACE TEMP TABLE bd_lists AS
SELECT
    CAST(row_number() OVER (ORDER BY run_id, query_id) AS INTEGER) AS list_id,
    CAST(dense_rank() OVER (ORDER BY run_id) AS INTEGER) AS run_no,
    run_id,
    query_id,
    num_ret,
    num_rel
FROM ev_pairs;

CREATE OR REPLACE TEMP TABLE bd_judged AS
SELECT
    l.list_id,
    l.run_no,
    l.num_ret,
    l.num_rel,
    CAST(j.rank AS INTEGER) AS rank,
    j.judged_so_far,
    j.relevant_so_far AS relevant,
    j.judged_so_far - j.relevant_so_far AS nonrelevant,
    j.gain,
    j.is_rel
FROM ev_judged AS j
JOIN bd_lists AS l USING (run_id, query_id)
WHERE j.rank <= $max_depth
UNION ALL
-- the empty prefix: gain and is_rel are NULL, it is no document
SELECT list_id, run_no, num_ret, num_rel, 0, 0, 0, 0, NULL, NULL
FROM bd_lists;

CREATE OR REPLACE TEMP TABLE bd_positions AS
WITH spans AS (
    SELECT
        p.list_id,
        p.run_no,
        p.num_ret,
        p.num_rel,
        p.rank,
        coalesce(n.rank, $max_depth + 1) AS next_rank,
        p.relevant,
        p.nonrelevant,
        p.gain,
        p.is_rel
    FROM bd_judged AS p
    LEFT JOIN bd_judged AS n
        ON n.list_id = p.list_id AND n.judged_so_far = p.judged_so_far + 1
)
SELECT
    s.list_id,
    s.run_no,
    s.num_ret,
    s.num_rel,
    s.rank,
    s.relevant,
    s.nonrelevant,
    s.gain,
    s.is_rel,
    a.below + 1 AS first_cell,
    b.below + 1 AS end_cell
FROM spans AS s
JOIN bd_grid_below AS a ON a.rank = s.rank
JOIN bd_grid_below AS b ON b.rank = s.next_rank;
