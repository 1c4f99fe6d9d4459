-- name: eval_condense
-- description: Condensed lists (Sakai 2007; trec_eval -J): unjudged documents removed, judged ones move up.
-- params:
-- The rank becomes the rank among judged documents, which is judged_so_far; R is unchanged,
-- and the running counts stay as they are (they only ever counted judged documents).
-- Assessment metrics are undefined on condensed lists: every remaining document is judged.
UPDATE ev_judged SET rank = judged_so_far;
