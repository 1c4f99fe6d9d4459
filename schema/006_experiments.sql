-- Meta-evaluation experiments for incomplete judgments (methods §8, Ahlgren & Grönqvist 2008):
-- run exclusion, swap error rates, Kendall tau between rankings, reduced qrels.
-- An experiment is identified by (collection_id, experiment_id); running it again with the
-- same id replaces every row it owns. The reduced qrels themselves are qrels sets
-- (qrels_sets.kind = 'derived') in the core qrels table, not rows here.

-- One row per (collection, experiment): what was run and with which parameters.
CREATE TABLE IF NOT EXISTS experiments (
    collection_id VARCHAR NOT NULL,
    experiment_id VARCHAR NOT NULL,       -- e.g. 'swap-rates-seed1-b1000', 'reduced-qrels-seed1'
    kind          VARCHAR NOT NULL,       -- 'swap-rates' | 'reduced-qrels'
    qrels_id      VARCHAR NOT NULL,       -- the full qrels set the experiment starts from
    params        VARCHAR NOT NULL,       -- JSON: measures, seed, samples, levels, cap, ...
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- One row per (collection, experiment, run): the run-exclusion decision of methods §8.1.
CREATE TABLE IF NOT EXISTS experiment_runs (
    collection_id   VARCHAR NOT NULL,
    experiment_id   VARCHAR NOT NULL,
    run_id          VARCHAR NOT NULL,
    total_retrieved BIGINT NOT NULL,      -- over the topic set, after the cap
    topics_empty    INTEGER NOT NULL,     -- topics of T with no retrieved document
    threshold       DOUBLE NOT NULL,      -- share x |T| x cap
    excluded        BOOLEAN NOT NULL,
    reason          VARCHAR               -- NULL for retained runs
);

-- One row per (collection, experiment, measure, bin of |dA|): swap counts (methods §8.2).
CREATE TABLE IF NOT EXISTS swap_rates (
    collection_id VARCHAR NOT NULL,
    experiment_id VARCHAR NOT NULL,
    measure       VARCHAR NOT NULL,
    bin           INTEGER NOT NULL,       -- floor(|dA| / bin_width)
    bin_lower     DOUBLE NOT NULL,
    bin_upper     DOUBLE NOT NULL,
    comparisons   BIGINT NOT NULL,        -- (sample, run pair) comparisons in the bin
    swaps         BIGINT NOT NULL,        -- of which dA * dB < 0
    error_rate    DOUBLE NOT NULL
);

-- One row per (collection, experiment, measure): the swap-rate summary of methods §8.2.
CREATE TABLE IF NOT EXISTS swap_summary (
    collection_id     VARCHAR NOT NULL,
    experiment_id     VARCHAR NOT NULL,
    measure           VARCHAR NOT NULL,
    n_runs            INTEGER NOT NULL,
    n_pairs           BIGINT NOT NULL,
    samples           INTEGER NOT NULL,
    topics_per_set    INTEGER NOT NULL,
    d_star            DOUBLE,             -- NULL when no bin reaches the error threshold
    best_mean         DOUBLE NOT NULL,
    d_star_pct        DOUBLE,             -- d_star as a percentage of best_mean
    sigma             DOUBLE NOT NULL,    -- standard deviation (n - 1) of the run means
    sigma_over_d_star DOUBLE
);

-- One row per (collection, experiment, first measure, second measure): Kendall tau_b
-- between the run rankings by the two measures under one qrels set (methods §8.3).
CREATE TABLE IF NOT EXISTS measure_tau (
    collection_id VARCHAR NOT NULL,
    experiment_id VARCHAR NOT NULL,
    qrels_id      VARCHAR NOT NULL,
    measure_a     VARCHAR NOT NULL,
    measure_b     VARCHAR NOT NULL,
    n_runs        INTEGER NOT NULL,
    tau           DOUBLE,
    p_value       DOUBLE
);

-- One row per (collection, experiment, measure, level, run): run means on reduced qrels.
CREATE TABLE IF NOT EXISTS reduced_run_means (
    collection_id VARCHAR NOT NULL,
    experiment_id VARCHAR NOT NULL,
    measure       VARCHAR NOT NULL,
    level         INTEGER NOT NULL,       -- a in percent; the full qrels are level 100
    qrels_id      VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL,
    value         DOUBLE
);

-- One row per (collection, experiment, measure, level): mean over runs, change against the
-- full qrels (methods §8.5) and Kendall tau_b against the full-qrels ranking (methods §8.3).
CREATE TABLE IF NOT EXISTS reduced_levels (
    collection_id VARCHAR NOT NULL,
    experiment_id VARCHAR NOT NULL,
    measure       VARCHAR NOT NULL,
    level         INTEGER NOT NULL,
    qrels_id      VARCHAR NOT NULL,
    n_runs        INTEGER NOT NULL,
    mean_value    DOUBLE,                 -- mean over runs of the run means
    full_mean     DOUBLE,                 -- the same on the full qrels
    change_pct    DOUBLE,                 -- 100 * (mean_value - full_mean) / full_mean
    tau           DOUBLE,
    tau_p_value   DOUBLE
);
