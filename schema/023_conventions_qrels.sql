-- A collection's conventions also name its default qrels set (issue 51, item 3): the set
-- every command evaluates against when none is given (--qrels-id). Without it the default
-- is the set named 'default', else the collection's only set (Store.qrels_set,
-- queries/reports/default_qrels.sql). NULL: no set chosen.
ALTER TABLE collection_conventions ADD COLUMN IF NOT EXISTS qrels_id VARCHAR;

COMMENT ON TABLE collection_conventions IS 'One row per collection that has conventions: leaderboard measures (the lead first), baselines, judged depth and default qrels set, reused by report, eval, compare, plot runs and the other commands; set by `evalwh conventions`.';
COMMENT ON COLUMN collection_conventions.qrels_id IS 'the qrels set commands use when none is given (NULL: the set named default, else the only set)';
