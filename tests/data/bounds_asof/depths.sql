-- name: bounds_depths
-- description: The depth grid of a bounds computation: one row per depth d.
-- params: depths INTEGER[]
-- "Every rank to 1000" is just the grid 1, 2, ..., 1000; nothing below loops over depths.
CREATE OR REPLACE TEMP TABLE ref_depths AS
SELECT DISTINCT CAST(depth AS INTEGER) AS depth
FROM (SELECT unnest($depths) AS depth)
ORDER BY depth;
