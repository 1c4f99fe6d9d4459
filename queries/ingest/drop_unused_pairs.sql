-- name: drop_unused_pairs
-- description: Drop the documents of deleted runs that no stored line refers to any more.
-- params:
-- delete_run.sql noted the documents the deleted runs' lines referred to (dropped_pairs); a
-- document another run's line still refers to stays, with its key. The stored lines' keys are
-- probed against the noted ones (DuckDB builds the anti join's table on them: a right anti join),
-- so the cost is one scan of run_rows' keys whatever the number of runs replaced (0.3 s on
-- 25 M lines). Run once per command, after its deletions and before any new key is given:
-- a dropped document's key is then never read again, and the next new document may take it.
DELETE FROM documents
WHERE doc_key IN (
    SELECT p.doc_key
    FROM dropped_pairs AS p
    WHERE NOT EXISTS (SELECT 1 FROM run_rows AS r WHERE r.doc_key = p.doc_key)
);

DROP TABLE dropped_pairs;
