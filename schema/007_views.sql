-- The documented, stable views for ad-hoc SQL (`evalwh sql`, `evalwh schema`).
-- Queries written against these views keep working when the tables underneath change;
-- the tables themselves are documented too (COMMENT ON) so that `evalwh schema` can list
-- every relation with its grain. Views over tables that later migrations add (decisions,
-- pools) are defined in those migrations.

-- Ranked results with their judgments, for every qrels set of the collection.
-- A result row appears once per qrels set (filter on qrels_id); relevance is NULL when the
-- document is not in that qrels set, and a negative grade ("pooled, not judged") is kept as
-- given, with judged = false, as every metric reads it.
CREATE OR REPLACE VIEW ranked_judgments AS
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
CREATE OR REPLACE VIEW topic_judgments AS
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
CREATE OR REPLACE VIEW per_query_scores AS
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
CREATE OR REPLACE VIEW run_scores AS
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
CREATE OR REPLACE VIEW run_overview AS
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

COMMENT ON TABLE collections IS 'One row per test collection.';
COMMENT ON TABLE topics IS 'One row per (collection, topic) judged in at least one qrels set.';
COMMENT ON TABLE qrels_sets IS 'One row per (collection, qrels set): ingested judgments or a derived set.';
COMMENT ON TABLE qrels IS 'One row per (collection, qrels set, topic, document); a negative grade is unjudged.';
COMMENT ON TABLE runs IS 'One row per (collection, run), with provenance and metadata.';
COMMENT ON TABLE run_results IS 'One row per (collection, run, topic, document); rank in trec_eval order.';
COMMENT ON TABLE run_topics IS 'One row per (collection, run, topic) retrieved, with num_ret.';
COMMENT ON TABLE results IS 'One row per (collection, run, topic or ''all'', measure, option set).';
COMMENT ON VIEW ranked_results IS 'One row per (collection, run, topic, document): score, rank, rank as given.';
COMMENT ON VIEW ranked_judgments IS 'One row per (collection, qrels set, run, topic, document): rank and relevance (NULL = unjudged).';
COMMENT ON VIEW topic_judgments IS 'One row per (collection, qrels set, topic): judged, relevant and pooled-unjudged counts.';
COMMENT ON VIEW per_query_scores IS 'One row per stored (collection, run, topic, measure, option set) value.';
COMMENT ON VIEW run_scores IS 'One row per stored (collection, run, measure, option set) mean.';
COMMENT ON VIEW run_overview IS 'One row per (collection, run): metadata, topics, documents, depth.';

COMMENT ON COLUMN ranked_judgments.qrels_id IS 'qrels set the relevance comes from; filter on it';
COMMENT ON COLUMN ranked_judgments.rank IS '1-based rank in trec_eval order (score desc, doc_id desc)';
COMMENT ON COLUMN ranked_judgments.relevance IS 'grade as judged; NULL = not in the qrels set';
COMMENT ON COLUMN ranked_judgments.judged IS 'true if the grade is >= 0 (a negative grade is unjudged)';
COMMENT ON COLUMN topic_judgments.relevant IS 'documents with grade > 0 (metrics apply their own threshold)';
COMMENT ON COLUMN topic_judgments.pooled_unjudged IS 'documents with a negative grade (pooled, not judged)';
COMMENT ON COLUMN per_query_scores.measure IS 'canonical measure spec, e.g. nDCG@10';
COMMENT ON COLUMN run_scores.n_undefined IS 'topics left out of the mean as undefined';
COMMENT ON COLUMN run_overview.documents IS 'result lines over all topics';
