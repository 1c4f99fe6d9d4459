-- name: strata
-- description: An audit's strata: units in the frame and audited, in stratum order.
-- params: collection_id VARCHAR, audit_id VARCHAR
SELECT stratum, label, population, sampled
FROM audit_strata
WHERE collection_id = $collection_id AND audit_id = $audit_id
ORDER BY stratum;
