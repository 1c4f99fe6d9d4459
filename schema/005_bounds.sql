-- Uncertainty bounds (methods §3.3, §7): lower and upper values of a measure per run and
-- depth, aggregated across topics by mean masses or by Dempster's rule of combination.

-- One row per (collection, run, measure, depth, aggregation, option set).
-- kind 'bound': [lower, upper] holds the value of every completion of the judgments (P, RBP);
-- for P, lower = Bel({R}) and upper = Pl({R}). kind 'scenario': lower is the measure with
-- unjudged documents assumed non-relevant and upper the "all unjudged relevant" value
-- M_allrel@d (AP, nDCG, R); it is not a bound and can be below lower.
-- aggregation 'mean' = mean masses over topics; 'dempster' = Dempster's rule over topics,
-- lower/upper/masses NULL with the reason in note on total conflict (K = 1).
CREATE TABLE IF NOT EXISTS bounds (
    collection_id VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL,
    measure       VARCHAR NOT NULL,    -- 'P', 'RBP(p=0.8)', 'AP', 'nDCG', 'R'
    kind          VARCHAR NOT NULL,    -- 'bound' | 'scenario'
    depth         INTEGER NOT NULL,
    aggregation   VARCHAR NOT NULL,    -- 'mean' | 'dempster'
    lower         DOUBLE,
    upper         DOUBLE,
    m_rel         DOUBLE,              -- m({R}) = Bel({R})
    m_nonrel      DOUBLE,              -- m({N}) = Bel({N})
    m_theta       DOUBLE,              -- m(Theta), the ignorance Pl({R}) - Bel({R})
    conflict      DOUBLE,              -- dempster: the conflict mass K of the whole combination
    n_topics      INTEGER NOT NULL,
    note          VARCHAR,             -- why a value is NULL
    qrels_id      VARCHAR NOT NULL,
    rel           INTEGER NOT NULL,
    depth_cap     INTEGER,
    computed_at   TIMESTAMP NOT NULL DEFAULT current_timestamp
);
