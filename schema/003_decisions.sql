-- System Evaluation Decision Matrix results (methods §4): every pair of runs tested on a
-- performance metric and its assessment metric at one depth, and the case it falls in.
-- A result depends on the family of runs tested together (the ANOVA and the Bonferroni
-- correction span all pairs of the family), so the family is part of the key: run_set is
-- a short hash of the sorted run ids, n_runs their number.

-- One row per (collection, pairing, options, run family, pair of runs).
CREATE TABLE IF NOT EXISTS decision_pairs (
    collection_id      VARCHAR NOT NULL,
    performance        VARCHAR NOT NULL,   -- canonical measure, e.g. 'P@10', 'AP'
    assessment         VARCHAR NOT NULL,   -- its assessment metric, e.g. 'A_p@10', 'AA'
    depth              INTEGER,            -- the shared depth d; NULL for MAP/MAA (full list)
    test               VARCHAR NOT NULL,   -- 'anova' | 'anova2' | 't' | 'wilcoxon' | 'randomization'
    correction         VARCHAR NOT NULL,   -- 'bonferroni' | 'holm' | 'none'
    alpha              DOUBLE NOT NULL,
    qrels_id           VARCHAR NOT NULL,
    run_set            VARCHAR NOT NULL,   -- hash of the sorted run ids of the family
    n_runs             INTEGER NOT NULL,
    run_a              VARCHAR NOT NULL,   -- the pair, oriented: outcomes read "run_a ... run_b"
    run_b              VARCHAR NOT NULL,
    n_topics           INTEGER NOT NULL,
    perf_mean_a        DOUBLE,
    perf_mean_b        DOUBLE,
    perf_statistic     DOUBLE,
    perf_p_value       DOUBLE,
    perf_p_adjusted    DOUBLE,
    perf_outcome       VARCHAR NOT NULL,   -- '>>' | '<<' | '=='
    assess_mean_a      DOUBLE,
    assess_mean_b      DOUBLE,
    assess_statistic   DOUBLE,
    assess_p_value     DOUBLE,
    assess_p_adjusted  DOUBLE,
    assess_outcome     VARCHAR NOT NULL,
    "case"             VARCHAR NOT NULL,   -- '1' | '2' | '3a' | '3b' | '4'
    case_group         VARCHAR NOT NULL,   -- '1' | '2' | '3' | '4'
    strength           VARCHAR NOT NULL,   -- 'strong' (cases 1, 3) | 'weak' (cases 2, 4)
    created_at         TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- One row per (collection, pairing, options, run family): the case proportions of its pairs.
CREATE TABLE IF NOT EXISTS decision_summary (
    collection_id VARCHAR NOT NULL,
    performance   VARCHAR NOT NULL,
    assessment    VARCHAR NOT NULL,
    depth         INTEGER,
    test          VARCHAR NOT NULL,
    correction    VARCHAR NOT NULL,
    alpha         DOUBLE NOT NULL,
    qrels_id      VARCHAR NOT NULL,
    run_set       VARCHAR NOT NULL,
    n_runs        INTEGER NOT NULL,
    n_pairs       INTEGER NOT NULL,
    c1            DOUBLE NOT NULL,    -- shares of n_pairs; c1 + c2 + c3 + c4 = 1
    c2            DOUBLE NOT NULL,
    c3            DOUBLE NOT NULL,    -- c3a + c3b
    c4            DOUBLE NOT NULL,
    c3a           DOUBLE NOT NULL,
    c3b           DOUBLE NOT NULL,
    strong        DOUBLE NOT NULL,    -- c1 + c3
    weak          DOUBLE NOT NULL,    -- c2 + c4
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);
