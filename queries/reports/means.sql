-- name: means
-- description: One row per (measure, run): the mean of the per-topic values (the sum for counts), topics used and topics undefined.
-- params:
-- ev_values holds measure, aggregate ('mean' | 'sum' | 'gmean'), run_id, query_id, value. An undefined
-- per-topic value (NULL, e.g. RankEff with N = 0) is left out of the mean and counted.
SELECT
    measure,
    run_id,
    CASE any_value(aggregate)
        WHEN 'sum' THEN sum(value ORDER BY query_id)
        -- the geometric mean of max(value, 0.00001) (GMAP, trec_eval's gm_map)
        WHEN 'gmean' THEN exp(avg(ln(greatest(value, 0.00001)) ORDER BY query_id))
        ELSE avg(value ORDER BY query_id)
    END AS value,
    count(value) AS n_topics,
    count(*) - count(value) AS n_undefined
FROM ev_values
GROUP BY measure, run_id
ORDER BY measure, run_id;
