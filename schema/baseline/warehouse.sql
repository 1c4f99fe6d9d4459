-- A new evalwh warehouse in one script: the schema as the steps schema/001_core.sql ..
-- schema/022_float32_ranking.sql leave it, each table, view and macro in its final form, and
-- the steps recorded as applied. Descriptions (COMMENT ON) are in descriptions.sql beside it.
--
-- evalwh lays down a new warehouse with this file instead of running the steps one after
-- another (many of their statements are later altered, dropped or replaced); a warehouse
-- file at an older step still migrates through the step files (Store._migrate). So:
--   * a new step schema/NNN_*.sql changes this file (and descriptions.sql) the same way and
--     adds its name to the INSERT at the end; tests/test_schema.py compares the catalog of a
--     warehouse made here with one made by the steps, and fails until both agree;
--   * a step this file does not record yet is applied after it, as on an older file.
-- For an empty database only: every CREATE fails where the object exists (it is no step).
-- Runs as-is in a DuckDB shell: duckdb new.duckdb < warehouse.sql.
-- Grains and column notes are the steps' own; the file that introduced a table says more.

-- The steps applied to the warehouse, once each (Store._migrate reads it).
CREATE TABLE schema_migrations (
    name       VARCHAR NOT NULL,
    applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- 001_core: collections, topics, qrels, runs. Every table carries collection_id (or reaches
-- it through a key); uniqueness of the natural keys is the ingest's, inside one transaction.

-- One row per test collection.
CREATE TABLE collections (
    collection_id VARCHAR NOT NULL,
    description   VARCHAR,
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- One row per (collection, topic) that has judgments in at least one qrels set.
CREATE TABLE topics (
    collection_id VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL
);

-- One row per (collection, qrels set), with its provenance (015_judgment_provenance).
CREATE TABLE qrels_sets (
    collection_id   VARCHAR NOT NULL,
    qrels_id        VARCHAR NOT NULL,
    kind            VARCHAR NOT NULL,     -- 'ingested' | 'derived'
    source_file     VARCHAR,              -- file name as given, or a description of the derivation
    sha256          VARCHAR NOT NULL,     -- of the content (decompressed), or of the derivation
    line_count      BIGINT,
    parent_qrels_id VARCHAR,              -- for derived sets
    params          VARCHAR,              -- JSON: how a derived set was made (seed, level, ...)
    created_at      TIMESTAMP NOT NULL DEFAULT current_timestamp,
    source          VARCHAR,              -- 'human' | 'llm' | 'inferred' | 'derived'
    judge           VARCHAR,              -- who judged: an assessor group, a team, a tool
    model           VARCHAR,              -- the model that produced the labels, when one did
    prompt_sha256   VARCHAR,              -- the prompt, stored once in judgment_prompts
    round           INTEGER               -- round or iteration of judging
);

-- One row per (collection, qrels set, topic, document). relevance is the grade as given
-- (012_float_grades: a DOUBLE); a negative grade means "pooled but not judged" and is read
-- as unjudged by every metric, as trec_eval does.
CREATE TABLE qrels (
    collection_id VARCHAR NOT NULL,
    qrels_id      VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    iteration     VARCHAR NOT NULL,       -- the second column of a qrels line, kept as text
    doc_id        VARCHAR NOT NULL,
    relevance     DOUBLE NOT NULL
);

-- One row per (collection, run).
CREATE TABLE runs (
    collection_id      VARCHAR NOT NULL,
    run_id             VARCHAR NOT NULL,
    tag                VARCHAR,           -- the tag column of the file (run_id unless --run-id)
    source_file        VARCHAR NOT NULL,
    sha256             VARCHAR NOT NULL,  -- of the content (decompressed)
    line_count         BIGINT NOT NULL,   -- result lines, comments excluded
    ingested_at        TIMESTAMP NOT NULL DEFAULT current_timestamp,
    group_name         VARCHAR,           -- participant group, from run metadata
    run_type           VARCHAR,           -- e.g. 'automatic' | 'manual'
    pooled             BOOLEAN,           -- contributed to the official pool
    float32_lists      INTEGER,           -- 021_float32_order: lists float32 scores reorder
    float32_first_rank INTEGER            -- the best rank where they do (NULL when none)
);

-- 013_keyed_results: a run's lines stored by integer keys; run_results is a view over them.

-- One row per (collection, run, topic) the run returned documents for; list_key is the list.
CREATE TABLE run_topics (
    collection_id VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    num_ret       INTEGER NOT NULL,
    list_key      INTEGER NOT NULL
);

-- One row per (collection, document) a run retrieved, with its key (026_document_keys: a
-- line's topic is its list's; the (topic, document) pair is derived, not stored).
CREATE TABLE documents (
    collection_id VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    doc_key       BIGINT NOT NULL
);

-- One row per run line, by keys; rank in trec_eval order. The rank column as the file wrote
-- it is kept only where it is not the rank's own decimal (026_document_keys): as an integer
-- where it is another integer's own decimal, else as text.
CREATE TABLE run_rows (
    list_key   INTEGER NOT NULL,
    doc_key    BIGINT NOT NULL,
    score      DOUBLE NOT NULL,
    rank       INTEGER NOT NULL,
    given_rank INTEGER,           -- the rank column, where it is another integer's own decimal
    given_text VARCHAR            -- the rank column, where it is no integer's own decimal
);

-- One row per (collection, run, topic, document); rank_given is the file's own rank column,
-- kept for reference and never used for ordering.
CREATE VIEW run_results AS
SELECT
    t.collection_id,
    t.run_id,
    t.query_id,
    d.doc_id,
    r.score,
    coalesce(r.given_text, CAST(coalesce(r.given_rank, r.rank) AS VARCHAR)) AS rank_given,
    r.rank
FROM run_rows AS r
JOIN run_topics AS t USING (list_key)
JOIN documents AS d USING (doc_key);

-- A score as a C float (021_float32_order): DuckDB refuses to cast a double whose float is
-- infinite (from 3.4028235677973366e38 on), where C rounds to an infinity.
CREATE MACRO float32_score(score) AS
    CASE
        WHEN abs(score) >= 3.4028235677973366e38 THEN CAST(sign(score) * 'inf'::DOUBLE AS FLOAT)
        ELSE CAST(score AS FLOAT)
    END;

-- THE ordering of a run, in one place (trec_eval's): score descending, ties broken by doc_id
-- descending in byte order; the rank column and the line order of the file are ignored.
-- With float32_ties, scores that are equal after rounding to a 32-bit float tie, as in
-- trec_eval up to 9.0.8 (022_float32_ranking: rounded as C rounds, float32_score).
-- `results` names any table or view with collection_id, run_id, query_id, doc_id, score;
-- its columns pass through (hence the *), with `rank` added. The partition keys are listed
-- most selective first (001_core says why).
CREATE MACRO trec_ranked(results, float32_ties) AS TABLE
    SELECT
        *,
        CAST(row_number() OVER (
            PARTITION BY run_id, query_id, collection_id
            ORDER BY
                CASE WHEN float32_ties THEN CAST(float32_score(score) AS DOUBLE) ELSE score END DESC,
                doc_id DESC
        ) AS INTEGER) AS rank
    FROM query_table(results);

-- Ranked results, the stable view for ad-hoc queries.
CREATE VIEW ranked_results AS
    SELECT collection_id, run_id, query_id, doc_id, score, rank, rank_given
    FROM run_results;

-- 002_results: stored evaluation results, keyed by measure and options.
-- One row per (collection, run, topic or 'all', measure, option set).
CREATE TABLE results (
    collection_id VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,    -- a topic, or 'all' for the mean over topics
    measure       VARCHAR NOT NULL,    -- canonical spec string, e.g. 'nDCG@10'
    value         DOUBLE,              -- NULL where undefined (e.g. RankEff with N = 0)
    n_topics      INTEGER,             -- for 'all': topics averaged
    n_undefined   INTEGER,             -- for 'all': topics left out as undefined
    qrels_id      VARCHAR NOT NULL,
    rel           INTEGER NOT NULL,    -- relevance threshold (trec_eval -l)
    unjudged      VARCHAR NOT NULL,    -- 'nonrelevant' | 'condensed' (trec_eval -J)
    depth_cap     INTEGER,             -- trec_eval -M; NULL = none
    float32_ties  BOOLEAN NOT NULL,
    averaging     VARCHAR NOT NULL,    -- 'default' | 'trec_eval_c' | 'trec_eval_default'
    evaluated_at  TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- 003_decisions: the System Evaluation Decision Matrix, keyed by the family of runs tested.
-- One row per (collection, pairing, options, run family, pair of runs).
CREATE TABLE decision_pairs (
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
CREATE TABLE decision_summary (
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

-- 004_pools, 019_pool_order: pools, with the judging order a strategy gives them. A pool's
-- qrels are the derived qrels set whose qrels_id is the pool_id.
-- One row per (collection, pool).
CREATE TABLE pools (
    collection_id   VARCHAR NOT NULL,
    pool_id         VARCHAR NOT NULL,     -- also the qrels_id of the pool's qrels
    depth           INTEGER NOT NULL,     -- lambda: each member's top lambda, trec_eval order
    parent_qrels_id VARCHAR NOT NULL,     -- the judgments the pool is restricted from
    selection       VARCHAR NOT NULL,     -- how the members were chosen: 'pooled' | 'all' | 'list'
    created_at      TIMESTAMP NOT NULL DEFAULT current_timestamp,
    strategy        VARCHAR,              -- depth | take | mtf | bandit | rbp | rrf | random
    budget          BIGINT,               -- judgments kept (NULL: the whole candidate set)
    budget_scope    VARCHAR,              -- 'topic' (budget per topic) | 'total'
    seed            BIGINT,               -- the seed of a random strategy (NULL otherwise)
    params          VARCHAR               -- JSON: the strategy's parameters
);

-- One row per (collection, pool, member run).
CREATE TABLE pool_runs (
    collection_id VARCHAR NOT NULL,
    pool_id       VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL
);

-- 005_bounds: uncertainty bounds of a measure per run and depth (the step says what kind
-- 'bound' and 'scenario' and the two aggregations mean).
-- One row per (collection, run, measure, depth, aggregation, option set).
CREATE TABLE bounds (
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

-- 006_experiments: meta-evaluation experiments for incomplete judgments; an experiment is
-- (collection_id, experiment_id), and running it again with the same id replaces its rows.
-- One row per (collection, experiment): what was run and with which parameters.
CREATE TABLE experiments (
    collection_id VARCHAR NOT NULL,
    experiment_id VARCHAR NOT NULL,       -- e.g. 'swap-rates-seed1-b1000', 'reduced-qrels-seed1'
    kind          VARCHAR NOT NULL,       -- 'swap-rates' | 'reduced-qrels'
    qrels_id      VARCHAR NOT NULL,       -- the full qrels set the experiment starts from
    params        VARCHAR NOT NULL,       -- JSON: measures, seed, samples, levels, cap, ...
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- One row per (collection, experiment, run): the run-exclusion decision of methods §8.1.
CREATE TABLE experiment_runs (
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
CREATE TABLE swap_rates (
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
CREATE TABLE swap_summary (
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
CREATE TABLE measure_tau (
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
CREATE TABLE reduced_run_means (
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
CREATE TABLE reduced_levels (
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

-- 007_views: the documented, stable views for ad-hoc SQL (`evalwh sql`, `evalwh schema`).

-- Ranked results with their judgments, for every qrels set of the collection.
-- A result row appears once per qrels set (filter on qrels_id); relevance is NULL when the
-- document is not in that qrels set, and a negative grade ("pooled, not judged") is kept as
-- given, with judged = false, as every metric reads it.
CREATE VIEW ranked_judgments AS
SELECT
    r.collection_id,
    s.qrels_id,
    r.run_id,
    r.query_id,
    r.doc_id,
    r.score,
    r.rank,
    q.relevance,
    coalesce(q.relevance >= 0, false) AS judged
FROM run_results AS r
JOIN qrels_sets AS s
    ON s.collection_id = r.collection_id
LEFT JOIN qrels AS q  -- LEFT: unjudged documents stay in the ranking
    ON q.collection_id = r.collection_id
    AND q.qrels_id = s.qrels_id
    AND q.query_id = r.query_id
    AND q.doc_id = r.doc_id;

-- Per-topic judgment counts of every qrels set: what R and N are before any threshold.
CREATE VIEW topic_judgments AS
SELECT
    collection_id,
    qrels_id,
    query_id,
    count(*) FILTER (WHERE relevance >= 0) AS judged,
    count(*) FILTER (WHERE relevance > 0) AS relevant,
    count(*) FILTER (WHERE relevance < 0) AS pooled_unjudged,
    max(relevance) AS max_relevance
FROM qrels
GROUP BY collection_id, qrels_id, query_id;

-- Stored per-topic scores (rows of `results` other than the 'all' means), with the options
-- that produced them: filter on the options to compare like with like.
CREATE VIEW per_query_scores AS
SELECT
    collection_id,
    run_id,
    query_id,
    measure,
    value,
    qrels_id,
    rel,
    unjudged,
    depth_cap,
    float32_ties,
    averaging,
    evaluated_at
FROM results
WHERE query_id <> 'all';

-- Stored run means (the 'all' rows of `results`), with topic counts and options.
CREATE VIEW run_scores AS
SELECT
    collection_id,
    run_id,
    measure,
    value,
    n_topics,
    n_undefined,
    qrels_id,
    rel,
    unjudged,
    depth_cap,
    float32_ties,
    averaging,
    evaluated_at
FROM results
WHERE query_id = 'all';

-- One row per run with its metadata and size.
CREATE VIEW run_overview AS
SELECT
    r.collection_id,
    r.run_id,
    r.group_name,
    r.run_type,
    r.pooled,
    count(t.query_id) AS topics,
    CAST(coalesce(sum(t.num_ret), 0) AS BIGINT) AS documents,
    min(t.num_ret) AS min_depth,
    max(t.num_ret) AS max_depth
FROM runs AS r
LEFT JOIN run_topics AS t  -- LEFT: a run with no result lines still has a row
    ON t.collection_id = r.collection_id AND t.run_id = r.run_id
GROUP BY r.collection_id, r.run_id, r.group_name, r.run_type, r.pooled;

-- 008_judged_cache .. 014_judged_spans: the judged rows of every ranked list per qrels set,
-- a cache the evaluation builds on first use, stored by keys, a stretch of deep judged
-- non-relevant documents as one row (014 says why and how).

-- The depth from which a stretch of grade-0 judged documents may share one row.
CREATE MACRO judged_spans_from() AS 100;

-- One row per (collection, qrels set, run) build in judged_results: what it was built from.
-- An entry is used only while both fingerprints still match; otherwise it is rebuilt.
CREATE TABLE judged_builds (
    collection_id     VARCHAR NOT NULL,
    qrels_id          VARCHAR NOT NULL,
    run_id            VARCHAR NOT NULL,
    run_sha256        VARCHAR NOT NULL,
    qrels_fingerprint VARCHAR NOT NULL,
    built_at          TIMESTAMP NOT NULL DEFAULT current_timestamp,
    build_key         INTEGER NOT NULL
);

-- Per build and list, one row per judged document, or per stretch of span consecutive ranks
-- below judged_spans_from() judged with grade 0; rank in trec_eval order, gain = the grade,
-- and the list's running counts at the default threshold (relevant = grade >= 1).
CREATE TABLE judged_results (
    build_key       INTEGER NOT NULL,
    list_key        INTEGER NOT NULL,
    rank            INTEGER NOT NULL,
    gain            DOUBLE NOT NULL,
    judged_so_far   INTEGER NOT NULL,
    relevant_so_far INTEGER NOT NULL,
    span            INTEGER NOT NULL DEFAULT 1,
    CHECK (span = 1 OR (span > 1 AND rank > judged_spans_from() AND gain = 0))
);

-- The cache one row per judged document, by key: stored rows as they are, stretches one row
-- per rank. The second branch repeats what the CHECK guarantees its rows as filters, so that
-- the planner drops it from a query that cannot need it (014_judged_spans says more, and
-- why the first branch says span < 2).
CREATE VIEW judged_rows AS
SELECT c.build_key, c.list_key, c.rank, c.gain, c.judged_so_far, c.relevant_so_far
FROM judged_results AS c
WHERE c.span < 2
UNION ALL
SELECT
    c.build_key,
    c.list_key,
    c.rank + s.step AS rank,
    c.gain,
    c.judged_so_far + s.step AS judged_so_far,
    c.relevant_so_far
FROM judged_results AS c
CROSS JOIN range(c.span) AS s(step)
WHERE c.span > 1 AND c.gain = 0 AND c.rank + s.step > judged_spans_from();

-- The cache by name, for reading it (the evaluation reads judged_results by key).
CREATE VIEW judged_cache AS
SELECT
    b.collection_id,
    b.qrels_id,
    t.run_id,
    t.query_id,
    c.rank,
    c.gain,
    c.judged_so_far,
    c.relevant_so_far
FROM judged_rows AS c
JOIN judged_builds AS b USING (build_key)
JOIN run_topics AS t USING (list_key);

-- 009_pool_experiments: pooling-bias experiments and stored score adjustments; an experiment
-- is (collection_id, experiment_id), its seed stored with it.
-- One row per (collection, experiment): the setting and every parameter, seed included.
CREATE TABLE pool_experiments (
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
CREATE TABLE pool_bias_samples (
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
CREATE TABLE pool_bias_summary (
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
CREATE TABLE pool_common_topics (
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
CREATE TABLE pool_adjustments (
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

-- 015_judgment_provenance, 016_judgment_detail_prompts: what a judgment rests on.
-- One row per distinct prompt text (sha256 of its UTF-8 bytes), stored once however many
-- sets or judgments were judged with it.
CREATE TABLE judgment_prompts (
    prompt_sha256 VARCHAR NOT NULL,
    prompt        VARCHAR NOT NULL,
    source_file   VARCHAR                 -- the file the text was first read from
);

-- One row per (collection, qrels set, topic, document) where the input carried more than a
-- grade: an LLM's score or confidence, the judge's reasoning, the prompt as sent (NULL when
-- the record carried none, or the set's own prompt). The grade itself stays in qrels.
CREATE TABLE judgment_details (
    collection_id VARCHAR NOT NULL,
    qrels_id      VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    score         DOUBLE,                 -- confidence or raw score, as given
    reasoning     VARCHAR,                -- the judge's explanation, as given
    prompt_sha256 VARCHAR
);

-- 018_collection_conventions: the measures a collection's reports lead with, its baselines
-- and judged depth; 023 adds its default qrels set. One row per collection at most; a NULL
-- column keeps that default.
CREATE TABLE collection_conventions (
    collection_id VARCHAR NOT NULL,
    measures      VARCHAR[],              -- leaderboard measures, the lead first
    baselines     VARCHAR[],              -- baseline runs, in order
    judged_depth  INTEGER,                -- the depth the judgments cover (a pool's depth)
    updated_at    TIMESTAMP NOT NULL DEFAULT current_timestamp,
    qrels_id      VARCHAR                 -- 023: the default qrels set (NULL: 'default', else the only set)
);

-- 019_pool_order: judging budgets.
-- One row per (collection, pool, topic, pooled document): where it comes in the judging order.
-- topic_order counts from 1 within the topic; overall_order from 1 across the whole pool (how
-- a total budget is spent). weight is the strategy's score of the document where it has one.
CREATE TABLE pool_order (
    collection_id VARCHAR NOT NULL,
    pool_id       VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    topic_order   INTEGER NOT NULL,
    overall_order BIGINT NOT NULL,
    weight        DOUBLE
);

-- One row per (collection, qrels set, topic, document) that came with an LLM's relevance
-- probabilities: probs as given, by grade; prob_relevant is the probability of a grade >= 1.
CREATE TABLE judgment_probabilities (
    collection_id VARCHAR NOT NULL,
    qrels_id      VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    probs         DOUBLE[] NOT NULL,
    prob_relevant DOUBLE NOT NULL
);

-- One row per (collection, budget experiment): its kind ('replay' | 'hybrid'), the reference
-- label set, the measure and every parameter (JSON), the seeds included.
CREATE TABLE budget_experiments (
    collection_id VARCHAR NOT NULL,
    experiment_id VARCHAR NOT NULL,
    kind          VARCHAR NOT NULL,
    reference_id  VARCHAR NOT NULL,
    measure       VARCHAR NOT NULL,
    params        VARCHAR NOT NULL,
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- One row per (collection, experiment, strategy, seed, budget): what that many judgments buy.
CREATE TABLE budget_results (
    collection_id    VARCHAR NOT NULL,
    experiment_id    VARCHAR NOT NULL,
    strategy         VARCHAR NOT NULL,
    seed             BIGINT,
    budget           BIGINT NOT NULL,     -- judgments (pairs judged by people)
    budget_share     DOUBLE NOT NULL,     -- budget / size of the reference's candidate pool
    judged           BIGINT NOT NULL,     -- pairs with a label (people's, plus a fill's)
    relevant_found   BIGINT NOT NULL,     -- relevant pairs among those judged by people
    relevant_share   DOUBLE NOT NULL,     -- relevant_found / relevant pairs of the reference
    kendall_tau_b    DOUBLE,
    tau_ap           DOUBLE,
    significant_kept DOUBLE,              -- share of the reference's significant pairs still significant, same sign
    judged_share     DOUBLE               -- mean A_p at the measure's depth over runs and topics
);

-- 020_external_sources: what ir_datasets says of a qrels set, and a run file's ir_metadata.
-- One row per (collection, qrels set) ingested from an ir_datasets id (irds:DATASET_ID).
CREATE TABLE qrels_external (
    collection_id   VARCHAR NOT NULL,
    qrels_id        VARCHAR NOT NULL,
    origin          VARCHAR NOT NULL,     -- 'ir_datasets'
    dataset_id      VARCHAR NOT NULL,     -- the id as given (msmarco-passage/trec-dl-2019)
    library_version VARCHAR,              -- ir_datasets' version at ingest
    qrels_sha256    VARCHAR,
    qrels_defs      VARCHAR
);

-- One row per (collection, run) whose file opened with an ir_metadata block: the block's
-- YAML as a JSON object (text), and the lines it takes at the top of the file.
CREATE TABLE run_ir_metadata (
    collection_id VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL,
    metadata      VARCHAR NOT NULL,
    block_lines   INTEGER NOT NULL
);

-- The block's main fields as columns, for ad-hoc SQL and for grouping runs. ir_metadata 0.1
-- writes some keys with a space ('research goal', 'test collection'); the view reads those
-- and their underscore spellings. method: the score function, else the first retrieval
-- stage's name, else its method: what a report groups runs by.
CREATE VIEW run_ir_metadata_fields AS
SELECT
    collection_id,
    run_id,
    json_extract_string(metadata, '$.tag') AS tag,
    json_extract_string(metadata, '$.actor.team') AS team,
    json_extract_string(metadata, '$.actor.name') AS actor,
    TRY_CAST(json_extract_string(metadata, '$.method.automatic') AS BOOLEAN) AS automatic,
    coalesce(
        json_extract_string(metadata, '$.method.score_function'),
        json_extract_string(metadata, '$.method.retrieval[0].name'),
        json_extract_string(metadata, '$.method.retrieval[0].method')
    ) AS method,
    coalesce(
        json_extract_string(metadata, '$.data."test collection".name'),
        json_extract_string(metadata, '$.data.test_collection.name')
    ) AS test_collection,
    json_extract_string(metadata, '$.implementation.source.repository') AS repository,
    json_extract_string(metadata, '$.implementation.source.commit') AS commit,
    coalesce(
        json_extract_string(metadata, '$."research goal".venue.name'),
        json_extract_string(metadata, '$.research_goal.venue.name')
    ) AS venue,
    metadata
FROM run_ir_metadata;

-- 024_exclusions: excluded documents (methods §17), (topic, document) pairs of a collection
-- that no run may count, with where each came from, and what their removal took from each run.
--
-- One row per (collection, source, topic, document) excluded:
--   origin   'qrels' (a line labelled -100 of the qrels set named by source: it leaves the
--            set and enters here) | 'file' (a line `topic docid` of the exclusion file named
--            by source)
-- The collection rule "a document whose id equals its topic's id is excluded" (BEIR's
-- ArguAna and Quora; ir_datasets' ignore_identical_ids) is a source of its own (origin
-- 'rule', source 'identical_ids') without rows here: it holds for every topic.
CREATE TABLE excluded_documents (
    collection_id VARCHAR NOT NULL,
    origin        VARCHAR NOT NULL,
    source        VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL
);

-- One row per (collection, source of exclusions): a qrels set with -100 lines, an exclusion
-- file (its content's SHA-256 and lines) or the identical-id rule.
CREATE TABLE exclusion_sources (
    collection_id VARCHAR NOT NULL,
    origin        VARCHAR NOT NULL,
    source        VARCHAR NOT NULL,
    sha256        VARCHAR,
    pairs         BIGINT NOT NULL,
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- One row per (collection, run, topic, document) the exclusions removed from a run before
-- it was ranked: the run's losses. rank is the document's rank in the run as given (trec_eval
-- order, before the ranks closed up); the run's stored lines (run_rows) are the others, ranked
-- 1, 2, ... again.
CREATE TABLE run_exclusions (
    collection_id VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    score         DOUBLE NOT NULL,
    rank          INTEGER NOT NULL,
    rank_given    VARCHAR
);

-- 025_audits: Random audits (methods §15): a sample of a collection's judged pairs drawn for people to
-- judge, whose design the prediction-powered estimates weight by.
--
-- One row per (collection, audit):
--   frame_id    the qrels set (a pool is one) whose judged pairs the audit was drawn from
--   machine_id  the machine's label set over the frame (stratification by grade reads it)
--   design      'pairs' (a random sample of pairs) | 'topics' (a random sample of topics,
--               all their pairs)
--   stratify    NULL | 'topic' | 'grade' (pairs only: a sample within each stratum)
--   size        the units asked for (pairs, or topics); seed the generator's seed (NULL for an
--               audit declared rather than drawn)
--   declared    true for an audit drawn elsewhere, declared and checked (evalwh audit declare)
--   check_note  what the check of a declared audit found
CREATE TABLE audits (
    collection_id VARCHAR NOT NULL,
    audit_id      VARCHAR NOT NULL,
    frame_id      VARCHAR NOT NULL,
    machine_id    VARCHAR NOT NULL,
    design        VARCHAR NOT NULL,
    stratify      VARCHAR,
    size          BIGINT NOT NULL,
    seed          BIGINT,
    declared      BOOLEAN NOT NULL DEFAULT false,
    check_note    VARCHAR,
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- One row per (collection, audit, stratum): its units in the frame (population) and in the
-- audit (sampled). Units are pairs, or topics for design 'topics'. label names the stratum
-- (the topic, the machine grade, or 'all').
CREATE TABLE audit_strata (
    collection_id VARCHAR NOT NULL,
    audit_id      VARCHAR NOT NULL,
    stratum       INTEGER NOT NULL,
    label         VARCHAR NOT NULL,
    population    BIGINT NOT NULL,
    sampled       BIGINT NOT NULL
);

-- One row per (collection, audit, audited pair), in the order drawn (draw_order, from 1):
-- the judging tasks `evalwh pool export AUDIT_ID` writes.
CREATE TABLE audit_pairs (
    collection_id VARCHAR NOT NULL,
    audit_id      VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    stratum       INTEGER NOT NULL,
    draw_order    BIGINT NOT NULL
);

-- The steps this file stands for, in order. A step added later and not yet folded in here
-- is applied after this file, as on an older warehouse (and tests/test_schema.py fails).
INSERT INTO schema_migrations (name) VALUES
    ('001_core'),
    ('002_results'),
    ('003_decisions'),
    ('004_pools'),
    ('005_bounds'),
    ('006_experiments'),
    ('007_views'),
    ('008_judged_cache'),
    ('009_pool_experiments'),
    ('010_judged_cache_order'),
    ('012_float_grades'),
    ('013_keyed_results'),
    ('014_judged_spans'),
    ('015_judgment_provenance'),
    ('016_judgment_detail_prompts'),
    ('017_table_comments'),
    ('018_collection_conventions'),
    ('019_pool_order'),
    ('020_external_sources'),
    ('021_float32_order'),
    ('022_float32_ranking'),
    ('023_conventions_qrels'),
    ('024_exclusions'),
    ('025_audits'),
    ('026_document_keys');
