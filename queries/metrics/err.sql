-- name: ERR
-- description: Expected reciprocal rank to depth k (whole list without k): the cascade model's chance of stopping at each rank, R = (2^g - 1) / 2^max_rel, divided by the rank.
-- params: k INTEGER = NULL, max_rel DOUBLE = 4 (max_rel > 0), gains GAINS = NULL
-- kind: performance
-- range: 0, 1
-- reference: Chapelle, Metzler, Zhang & Grinspan, CIKM 2009; gdeval.pl 1.2a (TREC Web track), ir_measures' ERR@k
-- ERR = sum over ranks i of R_i / i * prod_{j < i} (1 - R_j). The grade g is the gain (a
-- fractional grade as given), or gains={grade:gain,...} maps it (an unlisted grade keeps
-- its value); g is clipped to [0, max_rel] (gdeval.pl refuses a grade above 4, its max).
-- Unjudged documents and grade 0 have R = 0; the threshold (rel) plays no part.
WITH stops AS (
    SELECT
        run_id,
        query_id,
        rank,
        (pow(2, least(greatest(coalesce(CAST($gains AS MAP(DOUBLE, DOUBLE))[gain], gain), 0), $max_rel)) - 1)
            / pow(2, $max_rel) AS r
    FROM ev_judged
    WHERE $k IS NULL OR rank <= $k
),
cascade AS (
    SELECT
        run_id,
        query_id,
        rank,
        r,
        -- the chance the user reaches this rank: no stop at any rank above, prod (1 - R_j) as
        -- exp(sum ln(1 - R_j)) (1 - R > 0: g <= max_rel); ranks with R = 0 multiply by 1
        exp(
            coalesce(
                sum(ln(1 - r)) OVER (
                    PARTITION BY run_id, query_id ORDER BY rank ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
                ),
                0.0
            )
        ) AS reach
    FROM stops
    WHERE r > 0
)
SELECT
    p.run_id,
    p.query_id,
    coalesce(e.err, 0.0) AS value
FROM ev_pairs AS p
LEFT JOIN (
    SELECT run_id, query_id, sum(r * reach / rank ORDER BY rank) AS err
    FROM cascade
    GROUP BY run_id, query_id
) AS e USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
