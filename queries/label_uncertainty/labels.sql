-- name: lu_labels
-- description: The composed labels of a reference set H filled by a machine set M: one row per judged (topic, document), with the topic set and numbers for both.
-- params: collection_id VARCHAR, reference VARCHAR, machine VARCHAR, rel DOUBLE
-- reference: methods §12.1
-- A document judged by H (grade >= 0) keeps H's grade; a document only M judged carries
-- M's grade, which the label-uncertainty model replaces by a random human-equivalent grade.
-- Negative grades ("pooled, not judged") count as no judgment on either side, as in every
-- metric. The topic set is that of the composed evaluation (methods §0.4): topics with at
-- least one relevant document (grade >= rel) once M's grades fill H's holes; it stays fixed
-- across the Monte Carlo replicates.
--   lu_labels        one row per judged (topic, document): reference_grade (NULL when only
--                    M judged it), machine_grade (NULL when M did not judge it)
--   lu_topics        the topic set, numbered from 0 in query_id order (topic_no)
--   lu_machine_docs  the documents of those topics only M judged, numbered from 0 (doc_no)
CREATE OR REPLACE TEMP TABLE lu_labels AS
WITH reference AS (
    SELECT query_id, doc_id, relevance AS grade
    FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $reference AND relevance >= 0
),
machine AS (
    SELECT query_id, doc_id, relevance AS grade
    FROM qrels
    WHERE collection_id = $collection_id AND qrels_id = $machine AND relevance >= 0
)
SELECT
    coalesce(r.query_id, m.query_id) AS query_id,
    coalesce(r.doc_id, m.doc_id) AS doc_id,
    r.grade AS reference_grade,
    m.grade AS machine_grade
FROM reference AS r
FULL OUTER JOIN machine AS m ON m.query_id = r.query_id AND m.doc_id = r.doc_id;

CREATE OR REPLACE TEMP TABLE lu_topics AS
SELECT CAST(row_number() OVER (ORDER BY query_id) - 1 AS INTEGER) AS topic_no, query_id
FROM lu_labels
GROUP BY query_id
HAVING count(*) FILTER (WHERE coalesce(reference_grade, machine_grade) >= $rel) > 0;

CREATE OR REPLACE TEMP TABLE lu_machine_docs AS
SELECT
    CAST(row_number() OVER (ORDER BY t.topic_no, l.doc_id) - 1 AS INTEGER) AS doc_no,
    t.topic_no,
    l.query_id,
    l.doc_id,
    l.machine_grade
FROM lu_labels AS l
JOIN lu_topics AS t USING (query_id)
WHERE l.reference_grade IS NULL;
