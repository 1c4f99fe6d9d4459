-- name: RBP
-- description: Rank-biased precision as masses per run, topic and depth: m({R}) = base@d, m({N}) = weight of judged non-relevant positions, m(Theta) = resid@d.
-- params:
-- kind: bound
-- reference: Moffat & Zobel, TOIS 2008; methods §1.5, §3.3, §7.4
-- The rank weights (1 - p) p^(k-1), k = 1, 2, ..., sum to 1, so they split into three masses:
-- relevant positions within min(d, m) (base), judged non-relevant ones, and the rest
-- (unjudged positions plus the whole tail p^min(d,m), MISSING included): the residual.
-- [lower, upper] = [base, base + resid] = [m({R}), 1 - m({N})] is a true bound, the same
-- interval as RBP@d and RBP_upper@d of queries/metrics. p comes from bd_key, the same p
-- the weights of queries/bounds/segments_running.sql were built with.
CREATE OR REPLACE TEMP VIEW bd_topics AS
WITH weights AS (
    SELECT
        list_id,
        run_no,
        depth,
        (1 - k.p) * c.rbp_rel_weight AS m_rel,
        (1 - k.p) * c.rbp_nonrel_weight AS m_nonrel
    FROM bd_cells AS c
    CROSS JOIN bd_key AS k
)
SELECT
    list_id,
    run_no,
    depth,
    m_rel AS lower,
    1.0 - m_nonrel AS upper,
    m_rel,
    m_nonrel,
    -- clipped: rounding can leave -1e-17 when every position is judged
    greatest(1.0 - m_rel - m_nonrel, 0.0) AS m_theta
FROM weights;
