-- Pooling-bias experiments (methods §6.8, Webber & Park 2009) and stored score adjustments
-- (methods §6.2, §6.3). An experiment is identified by (collection_id, experiment_id); running
-- it again with the same id replaces every row it owns. Its seed is stored with it: the whole
-- experiment (run samples and topic samples) comes from one numpy Generator seeded with it.

-- One row per (collection, experiment): the setting and every parameter, seed included.
CREATE TABLE IF NOT EXISTS pool_experiments (
    collection_id      VARCHAR NOT NULL,
    experiment_id      VARCHAR NOT NULL,
    setting            VARCHAR NOT NULL,  -- 'all' (any run may be r or in S) | 'manual-vs-automatic'
    measure            VARCHAR NOT NULL,  -- e.g. 'RBP_trunc(p=0.8)@10'
    pool_depth         INTEGER NOT NULL,  -- lambda
    qrels_id           VARCHAR NOT NULL,  -- the judgments the experiment starts from
    completed_qrels_id VARCHAR NOT NULL,  -- Q* (methods §3.4): true scores and every simulated pool
    seed               BIGINT NOT NULL,   -- seed of the one numpy Generator
    repeats            INTEGER NOT NULL,  -- I, run samplings per pool width
    topic_samples      INTEGER NOT NULL,  -- J, common-topic samplings per run sampling
    widths             INTEGER[] NOT NULL,
    common_topics      INTEGER[] NOT NULL,  -- the numbers n of common topics
    handlings          VARCHAR[] NOT NULL,  -- 'nonrelevant', 'condensed'
    n_topics           INTEGER NOT NULL,    -- N
    params             VARCHAR NOT NULL,    -- JSON of all of the above and the eligible runs
    created_at         TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- One row per (collection, experiment, handling, pool width, repeat): one sampled pool S and
-- new run r, with r's mean scores. bias = unpooled_mean - true_mean (S2 Fig. 1);
-- loo_adjustment is Algorithm 1's a (assumed non-relevance only, NULL otherwise).
CREATE TABLE IF NOT EXISTS pool_bias_samples (
    collection_id  VARCHAR NOT NULL,
    experiment_id  VARCHAR NOT NULL,
    handling       VARCHAR NOT NULL,
    width          INTEGER NOT NULL,      -- w = |S|, the left-out run excluded
    repeat         INTEGER NOT NULL,
    new_run        VARCHAR NOT NULL,      -- r
    pool_runs      VARCHAR[] NOT NULL,    -- S
    true_mean      DOUBLE NOT NULL,       -- mu: r against Q*
    unpooled_mean  DOUBLE NOT NULL,       -- u-bar: r against Q* restricted to Pool_lambda(S)
    bias           DOUBLE NOT NULL,
    loo_adjustment DOUBLE,
    loo_adjusted   DOUBLE
);

-- One row per (collection, experiment, handling, pool width): S2 Fig. 1 and Table 1.
CREATE TABLE IF NOT EXISTS pool_bias_summary (
    collection_id    VARCHAR NOT NULL,
    experiment_id    VARCHAR NOT NULL,
    handling         VARCHAR NOT NULL,
    width            INTEGER NOT NULL,
    repeats          INTEGER NOT NULL,
    bias_mean        DOUBLE NOT NULL,     -- mean over repeats of the mean per-topic bias
    bias_q1          DOUBLE NOT NULL,
    bias_median      DOUBLE NOT NULL,
    bias_q3          DOUBLE NOT NULL,
    mae_unadjusted   DOUBLE NOT NULL,     -- mean |u-bar - mu|
    mae_loo_adjusted DOUBLE,              -- mean |u-bar + a - mu|, Algorithm 1 (nonrelevant only)
    loo_better       DOUBLE               -- share of repeats where Algorithm 1 is closer
);

-- One row per (collection, experiment, handling, pool width, number of common topics):
-- Algorithm 3 (S2 Tables 2-4). Each MAE averages repeats x topic_samples replicates.
CREATE TABLE IF NOT EXISTS pool_common_topics (
    collection_id   VARCHAR NOT NULL,
    experiment_id   VARCHAR NOT NULL,
    handling        VARCHAR NOT NULL,
    width           INTEGER NOT NULL,
    n_common        INTEGER NOT NULL,
    replicates      INTEGER NOT NULL,
    mae_unadjusted  DOUBLE NOT NULL,
    mae_mixed       DOUBLE NOT NULL,
    mae_adjusted    DOUBLE NOT NULL,
    mae_sampled     DOUBLE NOT NULL,      -- mean of the true scores on the common topics only
    adjusted_better DOUBLE NOT NULL,      -- share of replicates with 0 < a/A < 2
    fpc_factor      DOUBLE NOT NULL,      -- sqrt((N - n) / (n N))
    predicted_mae   DOUBLE NOT NULL       -- mean over repeats of sqrt(2/pi) SD(mu-hat_a), methods §6.5
);

-- One row per (collection, run, pool, measure, method, unjudged): the latest `evalwh adjust`
-- result; running it again with the same key replaces the row.
CREATE TABLE IF NOT EXISTS pool_adjustments (
    collection_id        VARCHAR NOT NULL,
    run_id               VARCHAR NOT NULL,
    pool_id              VARCHAR NOT NULL,
    measure              VARCHAR NOT NULL,
    method               VARCHAR NOT NULL,  -- 'leave-one-out' | 'common-topics'
    unjudged             VARCHAR NOT NULL,  -- 'nonrelevant' | 'condensed'
    common_topics        VARCHAR[],         -- C (common-topics only)
    seed                 BIGINT,            -- of the bootstrap (common-topics only)
    n_topics             INTEGER NOT NULL,
    n_common             INTEGER,
    n_runs               INTEGER,           -- pooled runs (leave-one-out only)
    unpooled             DOUBLE NOT NULL,
    a                    DOUBLE NOT NULL,
    adjusted             DOUBLE NOT NULL,
    mixed                DOUBLE,
    sampled              DOUBLE,
    ratio                DOUBLE,
    sigma2_a_hat         DOUBLE,
    se_adjusted          DOUBLE,
    clt_ok               BOOLEAN,
    bootstrap_confidence DOUBLE,
    delta_min            DOUBLE,
    delta_max            DOUBLE,
    created_at           TIMESTAMP NOT NULL DEFAULT current_timestamp
);
