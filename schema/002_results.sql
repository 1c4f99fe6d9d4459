-- Stored evaluation results, keyed by measure and options so that two numbers computed
-- differently can always be told apart.

-- One row per (collection, run, topic or 'all', measure, option set).
CREATE TABLE IF NOT EXISTS results (
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
