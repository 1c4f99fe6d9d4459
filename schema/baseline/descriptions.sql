-- The descriptions of a new warehouse (schema/baseline/warehouse.sql): what one row of each
-- table and view is, which command fills it, and notes on some columns, as the steps
-- schema/001_core.sql .. schema/024_exclusions.sql leave them (`evalwh schema` lists
-- them). Kept apart so that a throw-away warehouse (evalwh.evaluate's) can skip them; a new
-- step that adds or changes a description changes it here too (tests/test_schema.py).

-- Tables: the grain, and the command that fills the table.
COMMENT ON TABLE collections IS 'One row per test collection.';
COMMENT ON TABLE topics IS 'One row per (collection, topic) judged in at least one qrels set.';
COMMENT ON TABLE qrels_sets IS 'One row per (collection, qrels set): ingested judgments or a derived set.';
COMMENT ON TABLE qrels IS 'One row per (collection, qrels set, topic, document); relevance is the grade as given (DOUBLE, fractional allowed); a negative grade is unjudged.';
COMMENT ON TABLE runs IS 'One row per (collection, run), with provenance and metadata.';
COMMENT ON TABLE results IS 'One row per (collection, run, topic or ''all'', measure, option set); filled only by `evalwh eval --store` (and the Python API with store=True): plain `evalwh eval` stores nothing.';
COMMENT ON TABLE decision_pairs IS 'One row per (collection, pairing, options, run family, pair of runs): both tests and the decision-matrix case; filled by `evalwh matrix` when it stores.';
COMMENT ON TABLE decision_summary IS 'One row per (collection, pairing, options, run family): the share of pairs in each decision-matrix case; filled with decision_pairs.';
COMMENT ON TABLE pools IS 'One row per (collection, pool): depth and the qrels set it restricts; its judgments are the derived qrels set of the same id; filled by `evalwh pool build`.';
COMMENT ON TABLE pool_runs IS 'One row per (collection, pool, run that contributed to it); filled by `evalwh pool build`.';
COMMENT ON TABLE bounds IS 'One row per (collection, run, measure, depth, aggregation, option set): Dempster-Shafer lower and upper values; filled by `evalwh bounds --store`.';
COMMENT ON TABLE experiments IS 'One row per (collection, experiment): kind, qrels set and parameters; filled by the `evalwh experiment` commands.';
COMMENT ON TABLE experiment_runs IS 'One row per (collection, experiment, run): the run-exclusion decision; filled by `evalwh experiment exclusions`.';
COMMENT ON TABLE swap_rates IS 'One row per (collection, experiment, measure, bin of score difference): swap counts; filled by `evalwh experiment swap-rates`.';
COMMENT ON TABLE swap_summary IS 'One row per (collection, experiment, measure): the swap-rate summary; filled by `evalwh experiment swap-rates`.';
COMMENT ON TABLE measure_tau IS 'One row per (collection, experiment, two measures): Kendall tau_b between the run rankings; filled by `evalwh experiment reduced-qrels`.';
COMMENT ON TABLE reduced_run_means IS 'One row per (collection, experiment, measure, level, run): the run mean under a reduced qrels set; filled by `evalwh experiment reduced-qrels`.';
COMMENT ON TABLE reduced_levels IS 'One row per (collection, experiment, measure, level): change of means and Kendall tau against the full qrels; filled by `evalwh experiment reduced-qrels`.';
COMMENT ON TABLE pool_experiments IS 'One row per (collection, pooling-bias experiment): setting and parameters, seed included; filled by `evalwh experiment pool-bias`.';
COMMENT ON TABLE pool_bias_samples IS 'One row per (collection, experiment, handling, pool width, repeat): one sampled pool and new run with its bias; filled by `evalwh experiment pool-bias`.';
COMMENT ON TABLE pool_bias_summary IS 'One row per (collection, experiment, handling, pool width): bias quartiles and errors before and after adjustment; filled by `evalwh experiment pool-bias`.';
COMMENT ON TABLE pool_common_topics IS 'One row per (collection, experiment, handling, pool width): errors of the common-topics adjustments; filled by `evalwh experiment pool-bias`.';
COMMENT ON TABLE pool_adjustments IS 'One row per (collection, run, pool, measure, method): a pooling-bias adjusted score; filled by `evalwh adjust` (stores unless --no-store).';
COMMENT ON TABLE documents IS 'One row per (collection, document) a run retrieved, with its key (doc_key); a line''s topic is its list''s (run_topics).';
COMMENT ON TABLE run_topics IS 'One row per (collection, run, topic) retrieved, with num_ret and its key (list_key).';
COMMENT ON TABLE run_rows IS 'One row per run line, by keys: list_key, doc_key, score, rank in trec_eval order, and the rank column as written where it is not the rank (given_rank, or given_text where it is no integer''s own decimal).';
COMMENT ON TABLE judged_builds IS 'Cache: one row per (collection, qrels set, run) build, with what it was built from.';
COMMENT ON TABLE judged_results IS 'Cache: per build (qrels set, run) and list, one row per judged document, or per stretch of span consecutive ranks below judged_spans_from() judged with grade 0; with running counts.';
COMMENT ON TABLE judgment_prompts IS 'One row per distinct judging prompt, keyed by the sha256 of its text; qrels_sets.prompt_sha256 refers to it.';
COMMENT ON TABLE judgment_details IS 'One row per judgment whose input carried a raw score or confidence, or reasoning text (LLM judges); the grade stays in qrels.';
COMMENT ON TABLE collection_conventions IS 'One row per collection that has conventions: leaderboard measures (the lead first), baselines, judged depth and default qrels set, reused by report, eval, compare, plot runs and the other commands; set by `evalwh conventions`.';
COMMENT ON COLUMN collection_conventions.qrels_id IS 'the qrels set commands use when none is given (NULL: the set named default, else the only set)';
COMMENT ON TABLE pool_order IS 'One row per (collection, pool, topic, pooled document): its place in the judging order, per topic and overall; filled by `evalwh pool build`.';
COMMENT ON TABLE audits IS 'One row per (collection, random audit): the frame it was drawn from, the machine label set, its design (pairs or topics, stratification), size and seed, or declared and what its check found; filled by `evalwh audit draw|declare`.';
COMMENT ON TABLE audit_strata IS 'One row per (collection, audit, stratum): units in the frame (population) and in the audit (sampled), which the prediction-powered estimates weight by.';
COMMENT ON TABLE audit_pairs IS 'One row per (collection, audit, audited pair) in the order drawn: the judging tasks `evalwh pool export AUDIT_ID` writes.';
COMMENT ON TABLE judgment_probabilities IS 'One row per (collection, qrels set, topic, document) read from an LLM probability file (LARA CSV): the probabilities by grade and of relevance; filled by `evalwh ingest qrels` on such a file.';
COMMENT ON TABLE budget_experiments IS 'One row per (collection, budget experiment): kind, reference set, measure and parameters (seeds included); filled by `evalwh experiment budget`.';
COMMENT ON TABLE budget_results IS 'One row per (collection, experiment, strategy, seed, budget): relevant found, tau_b, tau_ap, significant pairs kept, judged share; filled by `evalwh experiment budget`.';
COMMENT ON TABLE qrels_external IS 'One row per (collection, qrels set) ingested from ir_datasets (irds:ID): dataset id, ir_datasets version, the qrels file''s SHA-256, the grade definitions (JSON); filled by `evalwh ingest qrels irds:ID`.';
COMMENT ON TABLE run_ir_metadata IS 'One row per (collection, run) whose file opened with an ir_metadata block: the block as JSON; filled by `evalwh ingest runs`.';
COMMENT ON TABLE excluded_documents IS 'One row per (collection, source, topic, document) no run may count (methods §17): a qrels line labelled -100 (origin ''qrels'') or an exclusion file''s line (origin ''file''); filled by `evalwh ingest qrels` and `evalwh exclusions add`.';
COMMENT ON TABLE exclusion_sources IS 'One row per (collection, source of exclusions): a qrels set with -100 lines, an exclusion file (SHA-256, pairs) or the rule identical_ids (a document whose id is its topic''s id); filled by `evalwh ingest qrels` and `evalwh exclusions add`.';
COMMENT ON TABLE run_exclusions IS 'One row per (collection, run, topic, document) the exclusions removed from a run before ranking (its losses), rank as given before the ranks closed up; filled by every ingest; `evalwh exclusions losses` lists them.';

-- Views: the grain.
COMMENT ON VIEW ranked_results IS 'One row per (collection, run, topic, document): score, rank, rank as given.';
COMMENT ON VIEW ranked_judgments IS 'One row per (collection, qrels set, run, topic, document): rank and relevance (NULL = unjudged).';
COMMENT ON VIEW topic_judgments IS 'One row per (collection, qrels set, topic): judged, relevant and pooled-unjudged counts.';
COMMENT ON VIEW per_query_scores IS 'One row per stored (collection, run, topic, measure, option set) value; empty until `evalwh eval --store` (plain `evalwh eval` stores nothing).';
COMMENT ON VIEW run_scores IS 'One row per stored (collection, run, measure, option set) mean; empty until `evalwh eval --store` (plain `evalwh eval` stores nothing).';
COMMENT ON VIEW run_overview IS 'One row per (collection, run): metadata, topics, documents, depth.';
COMMENT ON VIEW run_results IS 'One row per (collection, run, topic, document); rank in trec_eval order.';
COMMENT ON VIEW judged_rows IS 'Cache: one row per judged document of a build and list (stretches read back one row per rank), by key.';
COMMENT ON VIEW judged_cache IS 'Cache: one row per (collection, qrels set, run, topic, judged document), by name.';
COMMENT ON VIEW run_ir_metadata_fields IS 'One row per run with an ir_metadata block: tag, team, actor, automatic, method, test_collection, repository, commit, venue as columns, and the whole block.';

-- Columns.
COMMENT ON COLUMN runs.float32_lists IS 'lists (topics) whose order changes when scores are rounded to float32, as trec_eval 9 did (0: none; NULL: not known, stored before schema 021)';
COMMENT ON COLUMN runs.float32_first_rank IS 'the best rank where float32 scores reorder the run (NULL when none)';
COMMENT ON COLUMN ranked_judgments.qrels_id IS 'qrels set the relevance comes from; filter on it';
COMMENT ON COLUMN ranked_judgments.rank IS '1-based rank in trec_eval order (score desc, doc_id desc)';
COMMENT ON COLUMN ranked_judgments.relevance IS 'grade as judged; NULL = not in the qrels set';
COMMENT ON COLUMN ranked_judgments.judged IS 'true if the grade is >= 0 (a negative grade is unjudged)';
COMMENT ON COLUMN topic_judgments.relevant IS 'documents with grade > 0 (metrics apply their own threshold)';
COMMENT ON COLUMN topic_judgments.pooled_unjudged IS 'documents with a negative grade (pooled, not judged)';
COMMENT ON COLUMN per_query_scores.measure IS 'canonical measure spec, e.g. nDCG@10';
COMMENT ON COLUMN run_scores.n_undefined IS 'topics left out of the mean as undefined';
COMMENT ON COLUMN run_overview.documents IS 'result lines over all topics';
COMMENT ON COLUMN judged_results.span IS 'How many consecutive ranks the row stands for (rank .. rank + span - 1), all judged with grade 0 below judged_spans_from(); 1 for every other row.';
COMMENT ON COLUMN qrels_external.qrels_sha256 IS 'SHA-256 of the qrels file ir_datasets read (NULL when it read none)';
COMMENT ON COLUMN qrels_external.qrels_defs IS 'the dataset''s grade definitions, a JSON object {"grade": "meaning"}';
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
