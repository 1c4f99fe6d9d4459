-- name: R
-- description: Recall@d and the scenario R_allrel@d = (relevant + u_d) / (R + u_d) per run, topic and depth.
-- params:
-- kind: scenario
-- reference: methods §1.3, §3.3 [decision], §7.4
-- Relabelling the u_d unjudged documents of the top d as relevant adds u_d to both the
-- numerator and R. A scenario value, not a bound (here it never falls below recall, but the
-- relabelled R is not the collection's R). MISSING positions stay non-relevant.
CREATE OR REPLACE TEMP TABLE ref_topics AS
SELECT
    run_id,
    query_id,
    depth,
    CASE WHEN num_rel = 0 THEN 0.0 ELSE relevant / num_rel END AS lower,
    CASE
        WHEN num_rel + unjudged = 0 THEN 0.0
        ELSE (relevant + unjudged) / (num_rel + unjudged)
    END AS upper,
    CAST(NULL AS DOUBLE) AS m_rel,
    CAST(NULL AS DOUBLE) AS m_nonrel,
    CAST(NULL AS DOUBLE) AS m_theta
FROM ref_cells;
