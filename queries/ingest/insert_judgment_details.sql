-- name: insert_judgment_details
-- description: Store what judgment records hold besides the grade: raw score, reasoning, prompt.
-- params: collection_id VARCHAR, qrels_id VARCHAR, source_file VARCHAR
-- staged_details (query_id, doc_id, score, reasoning, prompt) has one row per judgment of the
-- set whose record carried any of the three. A prompt's text is stored once in
-- judgment_prompts, keyed by the sha256 of its UTF-8 bytes, whatever the number of
-- judgments (or sets) that carry it; each judgment refers to it by that hash.
INSERT INTO judgment_prompts (prompt_sha256, prompt, source_file)
SELECT sha256(prompt), any_value(prompt), $source_file
FROM staged_details AS d
WHERE prompt IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM judgment_prompts AS p WHERE p.prompt_sha256 = sha256(d.prompt))
GROUP BY sha256(prompt);

INSERT INTO judgment_details (collection_id, qrels_id, query_id, doc_id, score, reasoning, prompt_sha256)
SELECT
    $collection_id,
    $qrels_id,
    query_id,
    doc_id,
    score,
    reasoning,
    CASE WHEN prompt IS NULL THEN NULL ELSE sha256(prompt) END
FROM staged_details
ORDER BY query_id, doc_id;
