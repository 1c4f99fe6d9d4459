-- Provenance of judgments: where each qrels set came from.
-- Today the holes of a pool are often filled by labels from an LLM judge or an inference
-- method; a set records who (or what) made its labels so that evaluation can say which
-- labels a score rests on, and compare label sources with each other.
--
--   source         'human' (assessors), 'llm' (an LLM judge), 'inferred' (a method that
--                  infers labels, e.g. from other labels or runs), 'derived' (made by evalwh
--                  from another set: reduced samples, pool-restricted or completed qrels)
--   judge          who judged: an assessor group, a team, a tool name
--   model          the LLM (or other model) that produced the labels, when one did
--   prompt_sha256  the prompt's text is stored once in judgment_prompts, referenced by hash
--   round          round or iteration of judging (TREC-COVID rounds 1-5, say)
--
-- created_at and source_file (the file the set came from) exist since 001.
-- A warehouse made before this migration holds sets whose labels came from qrels files:
-- they are marked 'human' (evalwh's own derived sets: 'derived').
ALTER TABLE qrels_sets ADD COLUMN source VARCHAR;
ALTER TABLE qrels_sets ADD COLUMN judge VARCHAR;
ALTER TABLE qrels_sets ADD COLUMN model VARCHAR;
ALTER TABLE qrels_sets ADD COLUMN prompt_sha256 VARCHAR;
ALTER TABLE qrels_sets ADD COLUMN round INTEGER;

UPDATE qrels_sets SET source = CASE WHEN kind = 'derived' THEN 'derived' ELSE 'human' END;

-- One row per distinct prompt text (sha256 of its UTF-8 bytes), stored once however many
-- sets were judged with it.
CREATE TABLE IF NOT EXISTS judgment_prompts (
    prompt_sha256 VARCHAR NOT NULL,
    prompt        VARCHAR NOT NULL,
    source_file   VARCHAR                 -- the file the text was first read from
);

-- One row per (collection, qrels set, topic, document) where the input carried more than a
-- grade: an LLM's score or confidence before it was thresholded into a grade, and the
-- judge's reasoning (UMBRELA's --include-trace records). The grade itself stays in qrels.
CREATE TABLE IF NOT EXISTS judgment_details (
    collection_id VARCHAR NOT NULL,
    qrels_id      VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    score         DOUBLE,                 -- confidence or raw score, as given
    reasoning     VARCHAR                 -- the judge's explanation, as given
);

COMMENT ON TABLE judgment_prompts IS 'One row per distinct judging prompt, keyed by the sha256 of its text; qrels_sets.prompt_sha256 refers to it.';
COMMENT ON TABLE judgment_details IS 'One row per judgment whose input carried a raw score or confidence, or reasoning text (LLM judges); the grade stays in qrels.';
