-- A collection's conventions (docs/report.md, "Conventions"): the measures its reports lead
-- with, its baselines and its judged depth, set once with `evalwh conventions` so that
-- `evalwh report`, `evalwh plot runs` and `evalwh compare` reuse them instead of choosing
-- their defaults again. One row per collection at most; a NULL column keeps that default.
CREATE TABLE IF NOT EXISTS collection_conventions (
    collection_id VARCHAR NOT NULL,
    measures      VARCHAR[],              -- leaderboard measures, the lead first
    baselines     VARCHAR[],              -- baseline runs, in order
    judged_depth  INTEGER,                -- the depth the judgments cover (a pool's depth)
    updated_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

COMMENT ON TABLE collection_conventions IS 'One row per collection that has conventions: leaderboard measures (the lead first), baselines and judged depth, reused by report, plot runs and compare; set by `evalwh conventions`.';
