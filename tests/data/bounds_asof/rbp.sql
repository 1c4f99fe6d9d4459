-- name: RBP
-- description: Rank-biased precision as masses per run, topic and depth: m({R}) = base@d, m({N}) = weight of judged non-relevant positions, m(Theta) = resid@d.
-- params: p DOUBLE
-- kind: bound
-- reference: Moffat & Zobel, TOIS 2008; methods §1.5, §3.3, §7.4
-- The rank weights (1 - p) p^(k-1), k = 1, 2, ..., sum to 1, so they split into three masses:
-- relevant positions within min(d, m) (base), judged non-relevant ones, and the rest
-- (unjudged positions plus the whole tail p^min(d,m), MISSING included): the residual.
-- [lower, upper] = [base, base + resid] = [m({R}), 1 - m({N})] is a true bound, the same
-- interval as RBP@d and RBP_upper@d of queries/metrics. The positions table was built
-- with this $p.
CREATE OR REPLACE TEMP TABLE ref_topics AS
WITH weights AS (
    SELECT
        run_id,
        query_id,
        depth,
        (1 - $p) * rbp_rel_weight AS m_rel,
        (1 - $p) * rbp_nonrel_weight AS m_nonrel
    FROM ref_cells
)
SELECT
    run_id,
    query_id,
    depth,
    m_rel AS lower,
    1.0 - m_nonrel AS upper,
    m_rel,
    m_nonrel,
    -- clipped: rounding can leave -1e-17 when every position is judged
    greatest(1.0 - m_rel - m_nonrel, 0.0) AS m_theta
FROM weights;
