-- name: sample_loo_judged
-- description: Algorithm 1 for many sampled pools at once: each member's judged rows against its sample's pool and against that pool without the documents only it contributed.
-- params: collection_id VARCHAR, depth INTEGER
-- Needs ev_loo_spec (sample_id, run_id, member_id: one row per member of the pool S of sample
-- sample_id, whose new run is run_id), ev_qrels and ev_topics built on the completed qrels Q*,
-- and ev_ranked (queries/context). For every sample and member s (methods §6.2, with Webber &
-- Park's refinement): Q = Q* restricted to Pool_lambda(S), and Q_s = Q restricted to
-- Pool_lambda((S \ {s}) + {r}), i.e. Q less the documents that s alone, among the members and
-- the new run, has in its top lambda. Each (sample, member) gets two evaluation keys,
-- '<sample>/<member>/pooled' (against Q) and '<sample>/<member>/left_out' (against Q_s), which
-- take the place of run_id in ev_judged and ev_eval_counts, so the metric queries run
-- unchanged over all samples in one pass. Leaves ev_pool_rows for queries/pools/judged.sql,
-- which builds ev_judged, and ev_eval_counts.
CREATE OR REPLACE TEMP TABLE ev_sample_docs AS
WITH contributors AS (
    SELECT DISTINCT sample_id, member_id AS run_id, FALSE AS is_new FROM ev_loo_spec
    UNION ALL
    SELECT DISTINCT sample_id, run_id, TRUE AS is_new FROM ev_loo_spec
),
tops AS (
    SELECT c.sample_id, c.run_id, c.is_new, r.query_id, r.doc_id
    FROM contributors AS c
    JOIN run_results AS r ON r.collection_id = $collection_id AND r.run_id = c.run_id
    SEMI JOIN ev_topics AS t USING (query_id)
    WHERE r.rank <= $depth
)
-- one row per (sample, topic, document of Pool_lambda(S)); the new run's own documents are
-- not in Q, so they are judged in neither evaluation
SELECT
    sample_id,
    query_id,
    doc_id,
    count(*) FILTER (WHERE NOT is_new) AS n_members,
    bool_or(is_new) AS kept_by_new_run,
    min(run_id) FILTER (WHERE NOT is_new) AS first_member
FROM tops
GROUP BY sample_id, query_id, doc_id
HAVING count(*) FILTER (WHERE NOT is_new) >= 1;

-- one row per (sample, member, topic, document) that leaving the member out withdraws
CREATE OR REPLACE TEMP TABLE ev_sample_removed AS
SELECT sample_id, first_member AS member_id, query_id, doc_id
FROM ev_sample_docs
WHERE n_members = 1 AND NOT kept_by_new_run;

-- the judged rows of each member's list, twice: against Q (every row of the sample's pool)
-- and against Q_s (less the rows leaving the member out withdraws); ev_ranked holds every
-- run and member named in ev_loo_spec. queries/pools/judged.sql (pool_judged) cuts them at
-- $max_rank and adds the running counts
CREATE OR REPLACE TEMP VIEW ev_pool_rows AS
WITH member_rows AS (
    SELECT e.sample_id, e.member_id, r.query_id, r.doc_id, r.rank, q.gain, q.is_rel
    FROM (SELECT DISTINCT sample_id, member_id FROM ev_loo_spec) AS e
    JOIN ev_ranked AS r ON r.run_id = e.member_id
    JOIN ev_qrels AS q ON q.query_id = r.query_id AND q.doc_id = r.doc_id
    SEMI JOIN ev_sample_docs AS d
        ON d.sample_id = e.sample_id AND d.query_id = r.query_id AND d.doc_id = r.doc_id
),
flagged AS (
    SELECT
        m.sample_id,
        m.member_id,
        m.query_id,
        m.rank,
        m.gain,
        m.is_rel,
        x.doc_id IS NOT NULL AS withdrawn
    FROM member_rows AS m
    LEFT JOIN ev_sample_removed AS x
        ON x.sample_id = m.sample_id AND x.member_id = m.member_id
       AND x.query_id = m.query_id AND x.doc_id = m.doc_id
)
SELECT sample_id || '/' || member_id || '/pooled' AS run_id, query_id, rank, gain, is_rel
FROM flagged
UNION ALL
SELECT sample_id || '/' || member_id || '/left_out' AS run_id, query_id, rank, gain, is_rel
FROM flagged
WHERE NOT withdrawn;

-- R and N of Q (per sample) and of Q_s (per sample and member); T stays the topics of Q*
CREATE OR REPLACE TEMP TABLE ev_eval_counts AS
WITH pool_counts AS (
    SELECT
        d.sample_id,
        d.query_id,
        count(*) FILTER (WHERE q.is_rel) AS num_rel,
        count(*) FILTER (WHERE NOT q.is_rel) AS num_nonrel
    FROM ev_sample_docs AS d
    JOIN ev_qrels AS q USING (query_id, doc_id)
    GROUP BY d.sample_id, d.query_id
),
withdrawn AS (
    SELECT
        x.sample_id,
        x.member_id,
        x.query_id,
        count(*) FILTER (WHERE q.is_rel) AS num_rel,
        count(*) FILTER (WHERE NOT q.is_rel) AS num_nonrel
    FROM ev_sample_removed AS x
    JOIN ev_qrels AS q USING (query_id, doc_id)
    GROUP BY x.sample_id, x.member_id, x.query_id
),
member_topics AS (
    SELECT e.sample_id, e.member_id, t.query_id
    FROM (SELECT DISTINCT sample_id, member_id FROM ev_loo_spec) AS e
    CROSS JOIN ev_topics AS t
),
both_counts AS (
    SELECT
        m.sample_id,
        m.member_id,
        m.query_id,
        coalesce(p.num_rel, 0) AS pool_rel,
        coalesce(p.num_nonrel, 0) AS pool_nonrel,
        coalesce(w.num_rel, 0) AS withdrawn_rel,
        coalesce(w.num_nonrel, 0) AS withdrawn_nonrel
    FROM member_topics AS m
    LEFT JOIN pool_counts AS p ON p.sample_id = m.sample_id AND p.query_id = m.query_id
    LEFT JOIN withdrawn AS w
        ON w.sample_id = m.sample_id AND w.member_id = m.member_id AND w.query_id = m.query_id
)
SELECT
    sample_id || '/' || member_id || '/pooled' AS run_id,
    member_id AS source_run_id,
    query_id,
    CAST(pool_rel AS INTEGER) AS num_rel,
    CAST(pool_nonrel AS INTEGER) AS num_nonrel
FROM both_counts
UNION ALL
SELECT
    sample_id || '/' || member_id || '/left_out' AS run_id,
    member_id AS source_run_id,
    query_id,
    CAST(pool_rel - withdrawn_rel AS INTEGER) AS num_rel,
    CAST(pool_nonrel - withdrawn_nonrel AS INTEGER) AS num_nonrel
FROM both_counts;
