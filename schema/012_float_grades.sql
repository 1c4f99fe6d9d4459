-- Fractional relevance grades (LLM labellers and automatic qrels produce 0.5, 2.75, ...):
-- qrels.relevance holds the grade as given, a DOUBLE. Integer grades convert exactly, so an
-- existing warehouse keeps every value; a negative grade is still "pooled, not judged".
-- Binary measures read grade >= rel; gain measures (nDCG, ERR, graded RBP) take the grade as
-- the gain. The judged-rows cache keeps the grade as its gain, so it widens too; its rows
-- stay valid (same values), while the qrels fingerprint (a hash over relevance, now a DOUBLE)
-- changes, so each cached list is rebuilt once on its next evaluation.
ALTER TABLE qrels ALTER COLUMN relevance SET DATA TYPE DOUBLE;

ALTER TABLE judged_results ALTER COLUMN gain SET DATA TYPE DOUBLE;

COMMENT ON TABLE qrels IS 'One row per (collection, qrels set, topic, document); relevance is the grade as given (DOUBLE, fractional allowed); a negative grade is unjudged.';
