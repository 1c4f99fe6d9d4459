-- name: A_p_source
-- description: Judged share by provenance: documents in the top k whose label came from a set of the given source (source=human, llm, inferred, derived), or unjudged ones (source=none), divided by k.
-- params: k INTEGER, source VARCHAR = NULL [human|llm|inferred|derived|none]
-- kind: assessment
-- range: 0, 1
-- unjudged: nonrelevant
-- reference: methods §2.2 (A_p) split by the source of each label (docs/judgments.md)
-- A_p(source=llm)@10 resolves here (evalwh.measures.catalog). A_p counts the judged documents
-- of the top k; under a composition (evalwh eval --fill) each judged document's label came
-- from one set, and so from that set's source (qrels_sets.source, schema/015); the evaluation
-- context says which (ev_judged_sources: 07_sources.sql, 07_sources_composed.sql). source=none
-- is the rest: (k - judged) / k, unjudged documents and the positions a run shorter than k
-- leaves empty (methods §9.1). Summed over the four sources and none, the shares are 1.
-- Without source= every judged document counts: A_p itself.
WITH assessed AS (
    SELECT run_id, query_id, count(*) AS judged
    FROM ev_judged_sources
    WHERE rank <= $k AND ($source IS NULL OR $source = 'none' OR source = $source)
    GROUP BY run_id, query_id
)
SELECT
    p.run_id,
    p.query_id,
    CASE
        WHEN $source = 'none' THEN ($k - coalesce(a.judged, 0)) / $k
        ELSE coalesce(a.judged, 0) / $k
    END AS value
FROM ev_pairs AS p
LEFT JOIN assessed AS a USING (run_id, query_id)
ORDER BY p.run_id, p.query_id;
