-- name: list_audits
-- description: One row per stored audit of a collection: frame, machine set, design, units audited of the frame's, seed.
-- params: collection_id VARCHAR, audit_id VARCHAR
-- $audit_id NULL lists every audit. units is what the design samples (pairs or topics);
-- pairs counts the pairs to judge (for a topics audit, every pair of its topics).
WITH units AS (
    SELECT
        audit_id,
        CAST(sum(population) AS BIGINT) AS frame_units,
        CAST(sum(sampled) AS BIGINT) AS audited_units,
        count(*) AS strata
    FROM audit_strata
    WHERE collection_id = $collection_id
    GROUP BY audit_id
),
pairs AS (
    SELECT audit_id, count(*) AS pairs
    FROM audit_pairs
    WHERE collection_id = $collection_id
    GROUP BY audit_id
)
SELECT
    a.audit_id, a.frame_id, a.machine_id, a.design, a.stratify, u.strata, u.audited_units, u.frame_units,
    p.pairs, a.seed, a.declared, a.check_note, a.created_at
FROM audits AS a
LEFT JOIN units AS u USING (audit_id)
LEFT JOIN pairs AS p USING (audit_id)
WHERE a.collection_id = $collection_id AND ($audit_id IS NULL OR a.audit_id = $audit_id)
ORDER BY a.audit_id;
