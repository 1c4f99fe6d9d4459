-- Descriptions for the tables that had none, so that `evalwh schema` says of every table
-- what one row is and which command fills it. Tables of stored results are empty until a
-- command is asked to store: `evalwh eval` computes and prints, and stores only with --store.
COMMENT ON TABLE bounds IS 'One row per (collection, run, measure, depth, aggregation, option set): Dempster-Shafer lower and upper values; filled by `evalwh bounds --store`.';
COMMENT ON TABLE decision_pairs IS 'One row per (collection, pairing, options, run family, pair of runs): both tests and the decision-matrix case; filled by `evalwh matrix` when it stores.';
COMMENT ON TABLE decision_summary IS 'One row per (collection, pairing, options, run family): the share of pairs in each decision-matrix case; filled with decision_pairs.';
COMMENT ON TABLE experiments IS 'One row per (collection, experiment): kind, qrels set and parameters; filled by the `evalwh experiment` commands.';
COMMENT ON TABLE experiment_runs IS 'One row per (collection, experiment, run): the run-exclusion decision; filled by `evalwh experiment exclusions`.';
COMMENT ON TABLE swap_rates IS 'One row per (collection, experiment, measure, bin of score difference): swap counts; filled by `evalwh experiment swap-rates`.';
COMMENT ON TABLE swap_summary IS 'One row per (collection, experiment, measure): the swap-rate summary; filled by `evalwh experiment swap-rates`.';
COMMENT ON TABLE measure_tau IS 'One row per (collection, experiment, two measures): Kendall tau_b between the run rankings; filled by `evalwh experiment reduced-qrels`.';
COMMENT ON TABLE reduced_run_means IS 'One row per (collection, experiment, measure, level, run): the run mean under a reduced qrels set; filled by `evalwh experiment reduced-qrels`.';
COMMENT ON TABLE reduced_levels IS 'One row per (collection, experiment, measure, level): change of means and Kendall tau against the full qrels; filled by `evalwh experiment reduced-qrels`.';
COMMENT ON TABLE pools IS 'One row per (collection, pool): depth and the qrels set it restricts; its judgments are the derived qrels set of the same id; filled by `evalwh pool build`.';
COMMENT ON TABLE pool_runs IS 'One row per (collection, pool, run that contributed to it); filled by `evalwh pool build`.';
COMMENT ON TABLE pool_experiments IS 'One row per (collection, pooling-bias experiment): setting and parameters, seed included; filled by `evalwh experiment pool-bias`.';
COMMENT ON TABLE pool_bias_samples IS 'One row per (collection, experiment, handling, pool width, repeat): one sampled pool and new run with its bias; filled by `evalwh experiment pool-bias`.';
COMMENT ON TABLE pool_bias_summary IS 'One row per (collection, experiment, handling, pool width): bias quartiles and errors before and after adjustment; filled by `evalwh experiment pool-bias`.';
COMMENT ON TABLE pool_common_topics IS 'One row per (collection, experiment, handling, pool width): errors of the common-topics adjustments; filled by `evalwh experiment pool-bias`.';
COMMENT ON TABLE pool_adjustments IS 'One row per (collection, run, pool, measure, method): a pooling-bias adjusted score; filled by `evalwh adjust` (stores unless --no-store).';
COMMENT ON TABLE results IS 'One row per (collection, run, topic or ''all'', measure, option set); filled only by `evalwh eval --store` (and the Python API with store=True): plain `evalwh eval` stores nothing.';
COMMENT ON VIEW run_scores IS 'One row per stored (collection, run, measure, option set) mean; empty until `evalwh eval --store` (plain `evalwh eval` stores nothing).';
COMMENT ON VIEW per_query_scores IS 'One row per stored (collection, run, topic, measure, option set) value; empty until `evalwh eval --store` (plain `evalwh eval` stores nothing).';
