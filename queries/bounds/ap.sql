-- name: AP
-- description: AP@d and the scenario AP_allrel@d (every unjudged document in the top d relabelled relevant, R_up = R + u_d) per run, topic and depth.
-- params:
-- kind: scenario
-- reference: methods §1.2, §3.3 [decision], §7.4
-- NOT a bound: AP is normalised by R, which grows with the relabelling, so AP_allrel@d can
-- lie below AP@d (methods §1.8 property 5). MISSING positions stay non-relevant; u_d counts
-- the unjudged documents among the e = min(d, m) retrieved. No masses: m_* are NULL.
-- After relabelling, the relevant documents at or above rank k number k - N_k (N_k: judged
-- non-relevant at or above k), so the AP_allrel numerator is
--   sum_{k <= e, k not non-relevant} (k - N_k)/k
--     = e - N_e * harmonic(e) + sum_{non-relevant j} harmonic(j - 1)
--         - sum_{non-relevant j} (j - N_j)/j
-- (the first two terms sum (k - N_k)/k over every k <= e), read from prefix sums only.
CREATE OR REPLACE TEMP VIEW bd_topics AS
WITH cells AS (
    SELECT
        c.list_id,
        c.run_no,
        c.depth,
        c.num_rel,
        c.unjudged,
        c.precision_sum,
        c.evaluated - c.nonrelevant * h.harmonic + c.nonrel_harmonic_sum - c.nonrel_precision_sum
            AS precision_sum_allrel
    FROM bd_cells AS c
    JOIN bd_rank_sums AS h ON h.n = c.evaluated
)
SELECT
    list_id,
    run_no,
    depth,
    CASE WHEN num_rel = 0 THEN 0.0 ELSE precision_sum / num_rel END AS lower,
    CASE
        WHEN num_rel + unjudged = 0 THEN 0.0
        ELSE precision_sum_allrel / (num_rel + unjudged)
    END AS upper,
    CAST(NULL AS DOUBLE) AS m_rel,
    CAST(NULL AS DOUBLE) AS m_nonrel,
    CAST(NULL AS DOUBLE) AS m_theta
FROM cells;
