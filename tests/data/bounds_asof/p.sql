-- name: P
-- description: Dempster-Shafer masses of precision per run, topic and depth: m({R}) = P@d, m({N}), m(Theta) = U@d = 1 - A_p@d.
-- params:
-- kind: bound
-- reference: methods §7.1, §7.2, §3.3; S3
-- Frame Theta = {R, N}. Positions 1..d of a depth-d evaluation are relevant, judged
-- non-relevant, unjudged or missing (past the end of a short run); the last two carry
-- uncommitted belief, m(Theta). Divisor d throughout, so Bel({R}) = P@d (trec_eval P_d)
-- and the ignorance m(Theta) = 1 - A_p@d. [lower, upper] = [Bel({R}), Pl({R})] = [P, P + U]
-- is a true bound: every completion of the judgments gives a P@d inside it.
CREATE OR REPLACE TEMP TABLE ref_topics AS
SELECT
    run_id,
    query_id,
    depth,
    relevant / depth AS lower,
    (depth - nonrelevant) / depth AS upper,
    relevant / depth AS m_rel,
    nonrelevant / depth AS m_nonrel,
    (depth - relevant - nonrelevant) / depth AS m_theta
FROM ref_cells;
