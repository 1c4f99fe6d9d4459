-- Random audits (methods §15): a sample of a collection's judged pairs drawn for people to
-- judge, whose design the prediction-powered estimates weight by.
--
-- One row per (collection, audit):
--   frame_id    the qrels set (a pool is one) whose judged pairs the audit was drawn from
--   machine_id  the machine's label set over the frame (stratification by grade reads it)
--   design      'pairs' (a random sample of pairs) | 'topics' (a random sample of topics,
--               all their pairs)
--   stratify    NULL | 'topic' | 'grade' (pairs only: a sample within each stratum)
--   size        the units asked for (pairs, or topics); seed the generator's seed (NULL for an
--               audit declared rather than drawn)
--   declared    true for an audit drawn elsewhere, declared and checked (evalwh audit declare)
--   check_note  what the check of a declared audit found
CREATE TABLE IF NOT EXISTS audits (
    collection_id VARCHAR NOT NULL,
    audit_id      VARCHAR NOT NULL,
    frame_id      VARCHAR NOT NULL,
    machine_id    VARCHAR NOT NULL,
    design        VARCHAR NOT NULL,
    stratify      VARCHAR,
    size          BIGINT NOT NULL,
    seed          BIGINT,
    declared      BOOLEAN NOT NULL DEFAULT false,
    check_note    VARCHAR,
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- One row per (collection, audit, stratum): its units in the frame (population) and in the
-- audit (sampled). Units are pairs, or topics for design 'topics'. label names the stratum
-- (the topic, the machine grade, or 'all').
CREATE TABLE IF NOT EXISTS audit_strata (
    collection_id VARCHAR NOT NULL,
    audit_id      VARCHAR NOT NULL,
    stratum       INTEGER NOT NULL,
    label         VARCHAR NOT NULL,
    population    BIGINT NOT NULL,
    sampled       BIGINT NOT NULL
);

-- One row per (collection, audit, audited pair), in the order drawn (draw_order, from 1):
-- the judging tasks `evalwh pool export AUDIT_ID` writes.
CREATE TABLE IF NOT EXISTS audit_pairs (
    collection_id VARCHAR NOT NULL,
    audit_id      VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    stratum       INTEGER NOT NULL,
    draw_order    BIGINT NOT NULL
);

-- What each table is (methods §15; listed by evalwh schema).
COMMENT ON TABLE audits IS 'One row per (collection, random audit): the frame it was drawn from, the machine label set, its design (pairs or topics, stratification), size and seed, or declared and what its check found; filled by `evalwh audit draw|declare`.';
COMMENT ON TABLE audit_strata IS 'One row per (collection, audit, stratum): units in the frame (population) and in the audit (sampled), which the prediction-powered estimates weight by.';
COMMENT ON TABLE audit_pairs IS 'One row per (collection, audit, audited pair) in the order drawn: the judging tasks `evalwh pool export AUDIT_ID` writes.';
