-- What the ecosystem says about a qrels set or a run: where ir_datasets' qrels came from,
-- and the ir_metadata block a run file opened with (docs/ecosystem.md).
--
-- One row per (collection, qrels set) ingested from an ir_datasets id (irds:DATASET_ID):
--   origin             'ir_datasets'
--   dataset_id         the id as given (msmarco-passage/trec-dl-2019)
--   library_version    ir_datasets' version at ingest
--   qrels_sha256       the SHA-256 of the qrels file ir_datasets read (NULL when it read none)
--   qrels_defs         the dataset's grade definitions, a JSON object {"grade": "meaning"}
-- The set itself is in qrels_sets (source_file 'irds:DATASET_ID') and qrels.
CREATE TABLE IF NOT EXISTS qrels_external (
    collection_id   VARCHAR NOT NULL,
    qrels_id        VARCHAR NOT NULL,
    origin          VARCHAR NOT NULL,
    dataset_id      VARCHAR NOT NULL,
    library_version VARCHAR,
    qrels_sha256    VARCHAR,
    qrels_defs      VARCHAR
);

-- One row per (collection, run) whose file opened with an ir_metadata block
-- (# ir_metadata.start ... # ir_metadata.end, YAML after '# '):
--   metadata     the block's YAML as a JSON object (text; read it with DuckDB's JSON functions)
--   block_lines  the lines the block takes at the top of the file, its two markers included
CREATE TABLE IF NOT EXISTS run_ir_metadata (
    collection_id VARCHAR NOT NULL,
    run_id        VARCHAR NOT NULL,
    metadata      VARCHAR NOT NULL,
    block_lines   INTEGER NOT NULL
);

-- The block's main fields as columns, for ad-hoc SQL and for grouping runs. ir_metadata 0.1
-- writes some keys with a space ('research goal', 'test collection'); the view reads those
-- and their underscore spellings. method: the score function, else the first retrieval
-- stage's name, else its method: what a report groups runs by.
CREATE OR REPLACE VIEW run_ir_metadata_fields AS
SELECT
    collection_id,
    run_id,
    json_extract_string(metadata, '$.tag') AS tag,
    json_extract_string(metadata, '$.actor.team') AS team,
    json_extract_string(metadata, '$.actor.name') AS actor,
    TRY_CAST(json_extract_string(metadata, '$.method.automatic') AS BOOLEAN) AS automatic,
    coalesce(
        json_extract_string(metadata, '$.method.score_function'),
        json_extract_string(metadata, '$.method.retrieval[0].name'),
        json_extract_string(metadata, '$.method.retrieval[0].method')
    ) AS method,
    coalesce(
        json_extract_string(metadata, '$.data."test collection".name'),
        json_extract_string(metadata, '$.data.test_collection.name')
    ) AS test_collection,
    json_extract_string(metadata, '$.implementation.source.repository') AS repository,
    json_extract_string(metadata, '$.implementation.source.commit') AS commit,
    coalesce(
        json_extract_string(metadata, '$."research goal".venue.name'),
        json_extract_string(metadata, '$.research_goal.venue.name')
    ) AS venue,
    metadata
FROM run_ir_metadata;

COMMENT ON TABLE qrels_external IS 'One row per (collection, qrels set) ingested from ir_datasets (irds:ID): dataset id, ir_datasets version, the qrels file''s SHA-256, the grade definitions (JSON); filled by `evalwh ingest qrels irds:ID`.';
COMMENT ON TABLE run_ir_metadata IS 'One row per (collection, run) whose file opened with an ir_metadata block: the block as JSON; filled by `evalwh ingest runs`.';
COMMENT ON VIEW run_ir_metadata_fields IS 'One row per run with an ir_metadata block: tag, team, actor, automatic, method, test_collection, repository, commit, venue as columns, and the whole block.';
COMMENT ON COLUMN run_ir_metadata_fields.tag IS 'the block''s tag';
COMMENT ON COLUMN run_ir_metadata_fields.team IS 'actor.team';
COMMENT ON COLUMN run_ir_metadata_fields.actor IS 'actor.name';
COMMENT ON COLUMN run_ir_metadata_fields.automatic IS 'method.automatic (NULL unless true or false)';
COMMENT ON COLUMN run_ir_metadata_fields.method IS 'method.score_function, else the first retrieval stage''s name, else its method: what runs are grouped by';
COMMENT ON COLUMN run_ir_metadata_fields.test_collection IS 'data."test collection".name (or data.test_collection.name)';
COMMENT ON COLUMN run_ir_metadata_fields.repository IS 'implementation.source.repository';
COMMENT ON COLUMN run_ir_metadata_fields.commit IS 'implementation.source.commit';
COMMENT ON COLUMN run_ir_metadata_fields.venue IS '"research goal".venue.name (or research_goal.venue.name)';
COMMENT ON COLUMN run_ir_metadata_fields.metadata IS 'the whole block as JSON text';
COMMENT ON COLUMN qrels_external.qrels_defs IS 'the dataset''s grade definitions, a JSON object {"grade": "meaning"}';
COMMENT ON COLUMN qrels_external.qrels_sha256 IS 'SHA-256 of the qrels file ir_datasets read (NULL when it read none)';
