-- Judging budgets (issue 39): pools with a judging order, an LLM's relevance probabilities,
-- and the replays of what a budget buys.
--
-- A pool is no longer only "the top lambda of each member": a strategy orders the candidate
-- documents (the union of the members' top lambda) in the order they should be judged, and
-- a budget (per topic or in total) keeps the first documents of that order. The depth-lambda
-- pool of earlier versions is the strategy 'depth' without a budget: the same documents.
ALTER TABLE pools ADD COLUMN IF NOT EXISTS strategy VARCHAR;      -- depth | take | mtf | bandit | rbp | rrf | random
ALTER TABLE pools ADD COLUMN IF NOT EXISTS budget BIGINT;         -- judgments kept (NULL: the whole candidate set)
ALTER TABLE pools ADD COLUMN IF NOT EXISTS budget_scope VARCHAR;  -- 'topic' (budget per topic) | 'total'
ALTER TABLE pools ADD COLUMN IF NOT EXISTS seed BIGINT;           -- the seed of a random strategy (NULL otherwise)
ALTER TABLE pools ADD COLUMN IF NOT EXISTS params VARCHAR;        -- JSON: the strategy's parameters
UPDATE pools SET strategy = 'depth' WHERE strategy IS NULL;

-- One row per (collection, pool, topic, pooled document): where it comes in the judging order.
-- topic_order counts from 1 within the topic; overall_order from 1 across the whole pool (how
-- a total budget is spent). weight is the strategy's score of the document where it has one
-- (RBP or RRF weight, best rank for depth and take), NULL for the sequential strategies.
CREATE TABLE IF NOT EXISTS pool_order (
    collection_id VARCHAR NOT NULL,
    pool_id       VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    topic_order   INTEGER NOT NULL,
    overall_order BIGINT NOT NULL,
    weight        DOUBLE
);

-- One row per (collection, qrels set, topic, document) that came with an LLM's relevance
-- probabilities (the CSV LARA reads: topic_id, doc_id, annotation, prob_yes, prob_no or
-- prob_0 .. prob_k). probs holds them as given, by grade (prob_no, prob_yes for a binary
-- file); prob_relevant is the probability of a grade >= 1 (prob_yes, or prob_1 + ... + prob_k).
-- The label itself (annotation) is the grade in qrels.
CREATE TABLE IF NOT EXISTS judgment_probabilities (
    collection_id VARCHAR NOT NULL,
    qrels_id      VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL,
    probs         DOUBLE[] NOT NULL,
    prob_relevant DOUBLE NOT NULL
);

-- One row per (collection, budget experiment): its kind ('replay' | 'hybrid'), the reference
-- label set, the measure and every parameter (JSON), the seeds included.
CREATE TABLE IF NOT EXISTS budget_experiments (
    collection_id VARCHAR NOT NULL,
    experiment_id VARCHAR NOT NULL,
    kind          VARCHAR NOT NULL,
    reference_id  VARCHAR NOT NULL,
    measure       VARCHAR NOT NULL,
    params        VARCHAR NOT NULL,
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- One row per (collection, experiment, strategy, seed, budget): what that many judgments buy.
CREATE TABLE IF NOT EXISTS budget_results (
    collection_id    VARCHAR NOT NULL,
    experiment_id    VARCHAR NOT NULL,
    strategy         VARCHAR NOT NULL,
    seed             BIGINT,
    budget           BIGINT NOT NULL,     -- judgments (pairs judged by people)
    budget_share     DOUBLE NOT NULL,     -- budget / size of the reference's candidate pool
    judged           BIGINT NOT NULL,     -- pairs with a label (people's, plus a fill's)
    relevant_found   BIGINT NOT NULL,     -- relevant pairs among those judged by people
    relevant_share   DOUBLE NOT NULL,     -- relevant_found / relevant pairs of the reference
    kendall_tau_b    DOUBLE,
    tau_ap           DOUBLE,
    significant_kept DOUBLE,              -- share of the reference's significant pairs still significant, same sign
    judged_share     DOUBLE               -- mean A_p at the measure's depth over runs and topics
);

COMMENT ON TABLE pool_order IS 'One row per (collection, pool, topic, pooled document): its place in the judging order, per topic and overall; filled by `evalwh pool build`.';
COMMENT ON TABLE judgment_probabilities IS 'One row per (collection, qrels set, topic, document) read from an LLM probability file (LARA CSV): the probabilities by grade and of relevance; filled by `evalwh ingest qrels` on such a file.';
COMMENT ON TABLE budget_experiments IS 'One row per (collection, budget experiment): kind, reference set, measure and parameters (seeds included); filled by `evalwh experiment budget`.';
COMMENT ON TABLE budget_results IS 'One row per (collection, experiment, strategy, seed, budget): relevant found, tau_b, tau_ap, significant pairs kept, judged share; filled by `evalwh experiment budget`.';
