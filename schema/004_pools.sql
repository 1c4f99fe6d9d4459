-- Pools (methods §5): which runs contributed their top lambda documents to a set of judgments.
-- A pool's qrels are stored as a derived qrels set in `qrels` with qrels_id = pool_id (and a
-- `qrels_sets` row with kind = 'derived'), so every metric runs on a pool unchanged.

-- One row per (collection, pool).
CREATE TABLE IF NOT EXISTS pools (
    collection_id   VARCHAR NOT NULL,
    pool_id         VARCHAR NOT NULL,     -- also the qrels_id of the pool's qrels
    depth           INTEGER NOT NULL,     -- lambda: each member's top lambda, trec_eval order
    parent_qrels_id VARCHAR NOT NULL,     -- the judgments the pool is restricted from
    selection       VARCHAR NOT NULL,     -- how the members were chosen: 'pooled' | 'all' | 'list'
    created_at      TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- One row per (collection, pool, member run).
CREATE TABLE IF NOT EXISTS pool_runs (
    collection_id VARCHAR NOT NULL,
    pool_id       VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL
);
