-- The prompt of each judgment, where the judge's records carry it.
-- An LLM judge renders its prompt for every (topic, document) pair, so the prompt as sent
-- differs from judgment to judgment (UMBRELA's --include-trace records hold it). Its text is
-- stored once in judgment_prompts, like a set's prompt, and referenced here by its sha256.
-- A judgment whose record carried no prompt (or the same one as every other record of its
-- set: then it is the set's prompt, qrels_sets.prompt_sha256) has NULL.
ALTER TABLE judgment_details ADD COLUMN IF NOT EXISTS prompt_sha256 VARCHAR;
