"""Shared fixtures: an in-memory warehouse, table snapshots, and TREC-8 ingested once per session."""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer.testing

from evalwh.sql import identifier
from evalwh.warehouse import Warehouse


# typer's CliRunner builds the click command of the whole CLI on every invoke (0.03 CPU s,
# some 400 times in the inner loop); the tests' CLI never changes, so build it once per app.
typer.testing._get_command = functools.cache(typer.testing._get_command)


@pytest.fixture
def wh() -> Iterator[Warehouse]:
    """A fresh in-memory warehouse with the schema applied."""
    warehouse = Warehouse(":memory:")
    yield warehouse
    warehouse.close()


@pytest.fixture
def snapshot():
    """The function :func:`take_snapshot`, for comparing a warehouse before and after."""
    return take_snapshot


def take_snapshot(warehouse: Warehouse) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table of the warehouse (temporary tables excluded), sorted.

    Two snapshots are equal exactly when the warehouse holds the same data; tests take one
    before and one after a rejected ingest.
    """
    tables = [
        row[0]
        for row in warehouse.con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE NOT temporary AND database_name = current_database()"
            " ORDER BY table_name"
        ).fetchall()
    ]
    # table names come from the catalog and are quoted as identifiers
    return {
        table: warehouse.con.execute(f"SELECT * FROM {identifier(table)} ORDER BY ALL").fetchall()
        for table in tables
    }


SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TREC8 = SHARED_DATA / "trec8_adhoc"


# -- the golden data: ../shared beside the checkout ---------------------------------------
# Without it the golden tests (trec_eval's outputs and test suite, TREC-8) are skipped. That
# must not pass unnoticed: under CI=true the session fails at start, and elsewhere pytest ends
# with a warning naming the directory and how many tests it cost.


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"true", "1"}


def pytest_sessionstart(session: pytest.Session) -> None:
    if not SHARED_DATA.is_dir() and _in_ci():
        raise pytest.UsageError(
            f"{SHARED_DATA} is missing: the golden tests need ../shared beside the checkout (CI=true)"
        )
    if _in_ci() and java_runtime() is None:
        raise pytest.UsageError(f"no Java runtime for the Spark tests (CI=true): {JAVA_INSTALL}")


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    _java_banner(terminalreporter)
    if SHARED_DATA.is_dir():
        return
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if "shared" in str(report.longrepr)
    ]
    terminalreporter.write_sep("!", "golden data missing", red=True, bold=True)
    terminalreporter.write_line(
        f"{SHARED_DATA} is not there: {len(skipped)} tests against trec_eval's outputs and "
        "TREC-8 were skipped. Check out ../shared beside the repository to run them.",
        red=True,
        bold=True,
    )


# -- Java, for the Spark tests ----------------------------------------------------------------
# Spark's tests start a JVM (a local session, a standalone cluster). On a machine with Python
# alone they skip, and pytest ends with one banner naming what was skipped and the install
# line; under CI=true a missing runtime fails the session at start, as ../shared does.
JAVA_INSTALL = "apt-get install openjdk-17-jre-headless (or set JAVA_HOME to a Java 17 runtime)"
_JAVA: list[str | None] = []
_JAVA_SKIP = "no Java runtime: the Spark tests need one"


def java_runtime() -> str | None:
    """The java that Spark's launcher (bin/spark-class) would run, if it runs; else None.

    As spark-class chooses it: ``$JAVA_HOME/bin/java`` when JAVA_HOME is set, else ``java``
    on the PATH; it counts only if ``java -version`` exits 0. Looked up once per session.
    """
    if not _JAVA:
        import subprocess

        home = os.environ.get("JAVA_HOME")
        java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
        found = None
        if java:
            try:
                done = subprocess.run([java, "-version"], capture_output=True, timeout=60, check=False)
                found = java if done.returncode == 0 else None
            except OSError:
                found = None
        _JAVA.append(found)
    return _JAVA[0]


def needs_java() -> None:
    """Skip the calling test (or fixture) where no Java runtime is found."""
    if java_runtime() is None:
        pytest.skip(_JAVA_SKIP)


def _java_banner(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if _JAVA_SKIP in str(r.longrepr)]
    if not skipped:
        return
    files = sorted({r.nodeid.split("::")[0] for r in skipped})
    terminalreporter.write_sep("!", "no Java runtime", yellow=True, bold=True)
    terminalreporter.write_line(
        f"{len(skipped)} Spark tests were skipped ({', '.join(files)}): no runnable java "
        f"(JAVA_HOME/bin/java or java on the PATH). Install one to run them: {JAVA_INSTALL}",
        yellow=True,
        bold=True,
    )


# -- slow tests, and how -n shares the tests out --------------------------------------------
# The whole suite (the README's command) runs every test. The inner loop, -m "not slow", leaves
# out the tests marked slow: those on the full TREC-8 data and on Spark (marked in their files),
# the files below that start evalwh as a process again and again (signals, pipes, full disks,
# read-only file systems) or check trec_eval's whole test suite, and the tests named below:
# property and reference tests that build a fresh warehouse for every example, and tests that
# run many commands or draw figures. Each name is a test function in the file named; a name
# that no longer exists there is an error, so the list cannot go stale.
SLOW_FILES = {
    "test_probe2.py",
    "test_safety.py",
    "test_metrics_trec_eval.py",
    "test_report_readable.py",
    "test_report_scale.py",
    "test_report_ranks.py",
}
SLOW = {
    "test_ir_measures_provider.py": [
        "test_equals_default_providers_with_ties",
        "test_equals_default_providers_on_distinct_scores",
        "test_pt_experiment",
    ],
    "test_ir_metadata.py": ["test_evaluates_the_same_with_and_without_the_block", "test_report_shows_the_method"],
    "test_irds.py": ["test_trec_dl_2019_offline", "test_compare_accepts_irds"],
    "test_adhoc.py": ["test_write_statement_refused_and_data_unchanged"],
    "test_agreement.py": [
        "test_kappa_and_alpha_are_symmetric",
        "test_kappa_and_alpha_intervals_equal_a_loop_over_replicates",
        "test_llmjudge_against_references",
        "test_identical_sets_agree_fully",
    ],
    "test_bounds.py": [
        "test_belief_is_precision_and_ignorance_is_one_minus_ap",
        "test_spans_equal_the_previous_asof_formulation",
        "test_closed_form_equals_the_fold",
    ],
    "test_budget.py": [
        "test_replay_small_collection",
        "test_cli_pool_build_export_and_budget",
        "test_budget_tables_export_and_import",
        "test_hybrid_small_collection_stores_both_sets",
    ],
    "test_cli_compare.py": ["test_trec8_compare_two_runs_without_flags"],
    "test_rank_intervals.py": ["test_trec8_ranks_of_129_runs"],
    "test_cli_eval.py": ["test_eval_errors"],
    "test_cli_ingest.py": ["test_bad_input_is_one_error_line_and_exit_1"],
    "test_cli_output.py": [
        "test_every_run_id_whole_in_a_pipe",
        "test_tables_whole_in_a_pipe",
        "test_pool_and_experiment_commands_in_a_pipe",
    ],
    "test_cli_surface.py": ["test_report_demo_says_what_it_leaves"],
    "test_comparisons.py": ["test_swapping_a_pair_mirrors_it"],
    "test_decision.py": [
        "test_every_test_classifies_the_constructed_cases",
        "test_each_case_from_a_constructed_collection",
        "test_each_case_with_another_assessment_measure",
    ],
    "test_direct.py": [
        "test_random_collections_give_the_warehouse_numbers",
        "test_without_the_reader_the_numbers_are_the_same",
        "test_trec8_every_run_and_measure_as_the_warehouse",
        "test_bad_run_files_fail_as_in_the_ingest",
    ],
    "test_direct_pieces.py": ["test_files_read_in_pieces_give_the_warehouse_numbers"],
    "test_docs.py": ["test_readme_quick_start_runs"],
    "test_experiments.py": ["test_swap_property", "test_cli_experiment_commands"],
    "test_fill.py": [
        "test_a_fill_that_adds_nothing_is_the_identity",
        "test_shares_by_source_sum_to_one_and_follow_the_first_set_that_judged",
        "test_trec8_depth10_filled_by_full_equals_a_merged_qrels_file",
    ],
    "test_front_door.py": [
        "test_every_job_returns_what_its_command_prints",
        "test_compare_equals_the_statistics_on_the_same_scores",
        "test_evaluate_dataframes_equals_the_warehouse",
    ],
    "test_ingest.py": [
        "test_random_run_files_are_accepted_exactly_when_the_reference_accepts_them",
        "test_ranks_equal_a_python_sort_with_heavy_ties",
        "test_bad_run_file_is_rejected_with_its_line_and_nothing_changes",
    ],
    "test_ingest_pieces.py": ["test_pieces_give_what_whole_files_give"],
    "test_ingest_graded.py": ["test_ingests_with_the_judgments_spilled_store_what_in_memory_ones_do"],
    "test_ingest_spill.py": ["test_ingests_with_the_dictionary_spilled_store_what_in_memory_ones_do"],
    "test_ingest_reader.py": [
        "test_ingested_ranks_and_cache_equal_trec_ranked_and_the_sql_join",
        "test_deep_stretches_evaluate_as_the_direct_path",
        "test_a_killed_multi_file_ingest_leaves_all_or_nothing",
        "test_standard_input_is_read_once_by_every_command",
    ],
    "test_intervals.py": ["test_reject_exactly_when_the_interval_excludes_zero"],
    "test_keys.py": ["test_keys_give_back_every_line_as_ingested"],
    "test_label_uncertainty.py": [
        "test_identity_is_the_composition_for_any_labels",
    ],
    "test_measures_ir.py": [
        "test_threshold_and_condensing_options",
        "test_ndcg_gain_maps",
        "test_err_and_exp_ndcg_against_gdeval",
        "test_judged_compat_sdcg_rbp",
        "test_trec_eval_measures_under_ir_measures_names",
        "test_trec_eval_truncates_fractional_grades",
    ],
    "test_metrics_examples.py": ["test_properties"],
    "test_metrics_reference.py": ["test_agrees_with_pytrec_eval"],
    "test_pool_bias.py": [
        "test_cli_pool_bias_plot_and_stored_adjustment",
        "test_samples_and_algorithm1_equal_a_straightforward_per_sample_computation",
    ],
    "test_pools.py": ["test_setwise_leave_one_out_equals_rebuilt_pools"],
    "test_provenance.py": [
        "test_bad_jsonl_line_names_file_and_line",
        "test_parser_reads_back_what_was_written",
        "test_trec_covid_rounds",
        "test_llmjudge_33_llm_sets_and_the_human_one",
    ],
    "test_report.py": ["test_cli_demo_writes_html"],
    "test_runlines.py": [
        "test_ranks_and_running_counts_are_trec_rankeds",
        "test_every_score_it_reads_is_duckdbs_double",
    ],
    "test_score_files.py": ["test_ranx_per_query_scores"],
    "test_spark_executors.py": ["test_without_java_the_spark_tests_skip_with_one_banner"],
    "test_spark_settings.py": ["test_a_local_session_started_by_evalwh_runs_its_jvm_with_those_options"],
    "test_transfer.py": ["test_export_opens_in_spark"],
    "test_trec_eval.py": [
        "test_trec8_all_trec_byte_identical_for_all_runs",
        "test_trec_eval_suite",
        "test_atof_reads_the_leading_number_as_c_does",
    ],
    "test_trec_eval_quick.py": ["test_trec8_every_run_byte_identical_to_trec_eval_on_the_quick_measures"],
    "test_ir_measures_ties.py": ["test_equals_pytrec_eval_per_query_on_trec8"],
}


# Under -n (pytest-xdist), what one worker takes whole: a test's file (its module fixtures
# are then built once, not on both workers), and every test of the local Spark session
# together (one session started, not one per worker). The controller that shares the tests
# out sees only their ids, so the session's tests are named here by id; a test that takes
# the spark_session fixture and is not named is an error (pytest_collection_modifyitems).
# A Spark file's other tests (the standalone cluster's) go as their file, free to run on the
# other worker meanwhile.
LOCAL_SPARK = (
    "tests/test_spark.py::",
    "tests/test_spark_files.py::",
    "tests/test_transfer.py::test_export_opens_in_spark",
    "tests/test_spark_settings.py::test_a_local_session_started_by_evalwh_runs_its_jvm_with_those_options",
)
_SHARED_BY_UNIT = pytest.StashKey[bool]()
# The units that take longest in a run of the whole suite on 2 workers (-n auto), longest
# first (the local Spark session's some 150 s, test_probe4.py's 70, the cluster's 60...):
# they are shared out first, so that the run ends on short units and both workers end close
# together (a long unit handed out last runs alone at the end while the other worker idles).
LONGEST = (
    "the local Spark session",
    "tests/test_probe4.py",
    "tests/test_spark_cluster.py",
    "tests/test_probe2.py",
    "tests/test_probe4_properties.py",
    "tests/test_exclusions.py",
    "tests/test_conventions.py",
    "tests/test_safety.py",
    "tests/test_report_sentences.py",
    "tests/test_audits.py",
    "tests/test_trec_eval_quick.py",
    "tests/test_probe3_inputs.py",
)


def share_unit(nodeid: str) -> str:
    """The unit of work a test belongs to under -n: the local Spark session's, or its file."""
    return "the local Spark session" if nodeid.startswith(LOCAL_SPARK) else nodeid.split("::", 1)[0]


def pytest_configure(config: pytest.Config) -> None:
    # Under -n and no --dist (or -d) of the caller's own, the tests go out by share_unit, in
    # the order pytest_collection_modifyitems gives them (LONGEST first, then the files with
    # slow tests), not the unit of most tests first (pytest-xdist's --loadscope-reorder)
    # unless the caller says so. (pytest-xdist 3.8's own grouping, xdist_group with --dist
    # loadgroup, appends the group to a test's id by setting item._nodeid, which pytest 9 no
    # longer reads: the groups were shared out test by test, the Spark session's to both
    # workers.)
    given = [  # (the command line, PYTEST_ADDOPTS and the ini file's addopts)
        *map(str, config.invocation_params.args),
        *shlex.split(os.environ.get("PYTEST_ADDOPTS", "")),
        *config.getini("addopts"),
    ]
    chose = getattr(config.option, "distload", False)
    chose = chose or any(arg.startswith("--dist") for arg in given)
    if getattr(config.option, "dist", "no") == "load" and not chose:
        config.option.dist = "loadfile"
        config.stash[_SHARED_BY_UNIT] = True
        if not any(arg.endswith("loadscope-reorder") for arg in given):
            config.option.loadscopereorder = False


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):  # type: ignore[no-untyped-def]
    """pytest-xdist: share the tests out by :func:`share_unit` (when pytest_configure chose it)."""
    if not config.stash.get(_SHARED_BY_UNIT, False):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return share_unit(nodeid)

    return ByUnit(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # type: ignore[no-untyped-def]
    """pytest-xdist: tell each worker whether the tests go out by share_unit (for spark_session)."""
    node.workerinput["evalwh_by_unit"] = node.config.stash.get(_SHARED_BY_UNIT, False)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests in SLOW; check LOCAL_SPARK; start the files holding slow tests first."""
    modules = {}
    unnamed = []
    for item in items:
        file = item.path.name
        if file in SLOW_FILES or getattr(item, "originalname", item.name) in SLOW.get(file, ()):
            item.add_marker(pytest.mark.slow)
        takes_spark = "spark_session" in getattr(item, "fixturenames", ())
        if takes_spark and not item.nodeid.startswith(LOCAL_SPARK):
            unnamed.append(item.nodeid)
        if getattr(item, "module", None) is not None:
            modules[file] = item.module
    if unnamed:
        raise pytest.UsageError(
            "tests/conftest.py: LOCAL_SPARK does not name these tests that take spark_session: "
            + ", ".join(unnamed)
        )
    missing = [
        f"{file}::{name}"
        for file, module in modules.items()
        for name in SLOW.get(file, ())
        if not hasattr(module, name)
    ]
    if missing:
        raise pytest.UsageError(f"tests/conftest.py: SLOW names no such test: {', '.join(missing)}")
    stale = [unit for unit in LONGEST if unit.startswith("tests/") and not (config.rootpath / unit).is_file()]
    if stale:
        raise pytest.UsageError(f"tests/conftest.py: LONGEST names no such file: {', '.join(stale)}")
    # the longest units go first, longest first, then the files with slow tests, so that no
    # long unit starts last while the other worker idles
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    first = {unit: place for place, unit in enumerate(LONGEST)}
    items.sort(key=lambda item: (first.get(share_unit(item.nodeid), len(first)), item.path not in slow_files))


@pytest.fixture(scope="session")
def trec8_ingest(tmp_path_factory: pytest.TempPathFactory):
    """All of TREC-8 ad hoc (qrels, 129 runs, run metadata) ingested once per test run.

    Returns ``(path, run results, runs given metadata, seconds the runs took)``. Tests that
    only read open the file read-only; tests that write take ``trec8_copy``. Under -n the
    workers share one ingest: the first to need it ingests into the run's common temporary
    folder, holding a lock, and the others wait for it and read what it left.
    """
    if not TREC8.is_dir():
        pytest.skip(f"{TREC8} is not there (CI checks out ../shared beside the repository)")
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return _ingest_trec8(tmp_path_factory.mktemp("trec8") / "trec8.duckdb")
    import fcntl
    import pickle

    folder = tmp_path_factory.getbasetemp().parent / "trec8-shared"  # the run's, not the worker's
    folder.mkdir(exist_ok=True)
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = folder / "ingest.pickle"
        if not done.exists():
            done.write_bytes(pickle.dumps(_ingest_trec8(folder / "trec8.duckdb")))
        return pickle.loads(done.read_bytes())


def _ingest_trec8(db: Path):
    with Warehouse(db) as warehouse:
        warehouse.ingest_qrels(TREC8 / "trec8.qrels", collection="trec8")
        start = time.perf_counter()
        results = warehouse.ingest_runs(
            sorted((TREC8 / "runs").glob("input.*.gz")), collection="trec8"
        )
        seconds = time.perf_counter() - start
        updated = warehouse.ingest_run_metadata(TREC8 / "runs.tsv", collection="trec8")
    return db, results, updated, seconds


def trec8_with_runs(db: Path, runs: list[str]) -> Path:
    """A new warehouse of TREC-8's qrels and these runs only (``runs/input.<run>.gz``).

    For a test that reads a few runs and ingests further qrels sets: a qrels set ingested
    builds its cached judged rows for every run there is, here these few, not all 129.
    """
    if not TREC8.is_dir():
        pytest.skip(f"{TREC8} is not there (CI checks out ../shared beside the repository)")
    with Warehouse(db) as warehouse:
        warehouse.ingest_qrels(TREC8 / "trec8.qrels", collection="trec8")
        warehouse.ingest_runs([TREC8 / "runs" / f"input.{run}.gz" for run in runs], collection="trec8")
    return db


@pytest.fixture
def trec8_copy(trec8_ingest, tmp_path: Path) -> Path:
    """A private copy of the session's TREC-8 warehouse file, free to write to."""
    copy = tmp_path / "trec8.duckdb"
    shutil.copy(trec8_ingest[0], copy)
    return copy


# The shared local session's settings for the tests' small inputs: few shuffle partitions, no
# adaptive planning. They name neither the driver's JVM options nor the UI, which evalwh's
# start() chooses (test_spark_settings.py checks them on this session's JVM).
SPARK_TEST_SETTINGS = {
    "spark.sql.shuffle.partitions": "1",
    "spark.default.parallelism": "2",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.memory": "2g",
}


@pytest.fixture(scope="session")
def spark_session(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """ONE local Spark session (2 threads) for every Spark test of the session.

    Starting a JVM costs 10-30 s, so all Spark tests share it: started by evalwh's own
    :func:`evalwh.spark.session.start` (its JVM options, no UI, quiet logging) with
    :data:`SPARK_TEST_SETTINGS`; tests that read more (TREC-8) raise the shuffle partitions
    for their own duration only (runtime SQL settings). Under -n its tests go to one worker
    (share_unit); a second worker that starts one fails instead.
    """
    pytest.importorskip("pyspark.sql", reason="pyspark is in the test extra")
    needs_java()
    if getattr(request.config, "workerinput", {}).get("evalwh_by_unit"):
        started = tmp_path_factory.getbasetemp().parent / "local-spark-session"  # the run's folder
        try:
            started.touch(exist_ok=False)
        except FileExistsError:
            pytest.fail(
                "a second worker starts the local Spark session: its tests are not in one unit"
                " (tests/conftest.py, LOCAL_SPARK and share_unit)"
            )
    from evalwh.spark.session import start

    # started as evalwh starts a local session (evalwh.spark.session.start): the lean JVM, no
    # UI, quiet logging, the executors' Python workers on this interpreter (evalwh's reader on
    # them); test_spark_settings.py asks this JVM which options it runs with
    session = start("local[2]", app_name="evalwh-test", config=SPARK_TEST_SETTINGS)
    yield session
    session.stop()
