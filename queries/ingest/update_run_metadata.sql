-- name: update_run_metadata
-- description: Set group, type and pooled flag of the collection's runs from staged_metadata.
-- params: collection_id VARCHAR
-- staged_metadata has run_id, group_name, run_type, pooled (NULL where the source lacks a column);
-- a NULL keeps the stored value.
UPDATE runs AS r
SET
    group_name = coalesce(m.group_name, r.group_name),
    run_type = coalesce(m.run_type, r.run_type),
    pooled = coalesce(m.pooled, r.pooled)
FROM staged_metadata AS m
WHERE r.collection_id = $collection_id AND r.run_id = m.run_id;
