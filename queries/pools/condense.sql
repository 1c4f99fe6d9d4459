-- name: pool_condense
-- description: Condensed lists over per-run pool qrels: the rank becomes the rank among the judged documents.
-- params:
-- The same operation as the evaluation context's condense step (Sakai 2007; trec_eval -J),
-- applied after ev_judged was rebuilt with each run's own pool qrels, so that the list is
-- condensed against the *restricted* judgments (methods §3.2). R is unchanged.
UPDATE ev_judged SET rank = judged_so_far;
