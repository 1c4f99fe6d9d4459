-- name: measure_options
-- description: Re-derive the evaluation's judged rows and pairs for a measure with its own threshold (rel=) or condensing (judged_only=).
-- params: rel DOUBLE, condensed BOOLEAN
-- ir_measures' P(rel=2)@10 or AP(judged_only=true) change an option of the evaluation for one
-- measure. The topic set T and the (run, topic) pairs stay those of the evaluation (ev_pairs,
-- kept as ev_pairs_base by evalwh.measures.evaluation while such measures run), so every mean is over
-- the same topics; what changes is which judged documents count as relevant (grade >= rel),
-- R and N, and, on condensed lists, the ranks (rank among judged documents) and m.
-- The running counts are re-counted at this threshold (the cached ones are for the
-- evaluation's threshold); the view names are the context's, so every metric query reads
-- these rows unchanged. evalwh.measures.evaluation restores the context afterwards (restore.sql).
SET VARIABLE ev_rel = CAST($rel AS DOUBLE);
SET VARIABLE ev_condensed = CAST($condensed AS BOOLEAN);

CREATE OR REPLACE TEMP TABLE ev_judged_options AS
SELECT
    s.run_id,
    s.query_id,
    s.rank,
    s.gain,
    s.judged_so_far,
    CAST(
        sum(CASE WHEN s.gain >= $rel THEN 1 ELSE 0 END)
            OVER (PARTITION BY s.run_id, s.query_id ORDER BY s.rank ROWS UNBOUNDED PRECEDING)
        AS INTEGER
    ) AS relevant_so_far
FROM ev_judged_source AS s;

CREATE OR REPLACE TEMP VIEW ev_judged AS
SELECT
    s.run_id,
    s.query_id,
    CASE WHEN getvariable('ev_condensed') THEN s.judged_so_far ELSE s.rank END AS rank,
    s.gain,
    s.gain >= getvariable('ev_rel') AS is_rel,
    s.relevant_so_far,
    s.judged_so_far,
    s.judged_so_far - s.relevant_so_far - CASE WHEN s.gain >= getvariable('ev_rel') THEN 0 ELSE 1 END
        AS nonrelevant_above
FROM ev_judged_options AS s
WHERE s.rank <= getvariable('ev_depth_cap');

CREATE OR REPLACE TEMP TABLE ev_pairs AS
WITH counts AS (
    -- ev_qrels applies the session's threshold, now this measure's
    SELECT
        query_id,
        count(*) FILTER (WHERE is_rel) AS num_rel,
        count(*) FILTER (WHERE NOT is_rel) AS num_nonrel
    FROM ev_qrels
    GROUP BY query_id
),
judged_counts AS (
    SELECT run_id, query_id, count(*) AS num_judged
    FROM ev_judged
    GROUP BY run_id, query_id
)
SELECT
    b.run_id,
    b.query_id,
    CAST(
        CASE
            WHEN $condensed THEN coalesce(j.num_judged, 0)
            ELSE coalesce(least(rt.num_ret, getvariable('ev_depth_cap')), 0)
        END AS INTEGER
    ) AS num_ret,
    CAST(coalesce(c.num_rel, 0) AS INTEGER) AS num_rel,
    CAST(coalesce(c.num_nonrel, 0) AS INTEGER) AS num_nonrel
FROM ev_pairs_base AS b
LEFT JOIN run_topics AS rt
    ON rt.collection_id = getvariable('ev_collection_id') AND rt.run_id = b.run_id AND rt.query_id = b.query_id
LEFT JOIN judged_counts AS j ON j.run_id = b.run_id AND j.query_id = b.query_id
LEFT JOIN counts AS c ON c.query_id = b.query_id;
