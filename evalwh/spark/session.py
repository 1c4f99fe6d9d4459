"""The Spark session evalwh runs on: quiet, tuned for the cores it has, reused when one exists.

:func:`start` returns the active session (spark-submit's, or a test's), or builds one on the
master given. What it sets, and why:

* **Quiet.** Spark logs warnings by default, and some come before any SparkContext exists (the
  loopback hostname, the native Hadoop library), where ``setLogLevel`` cannot reach them. The
  driver JVM is therefore started with the log4j2 configuration shipped beside this module
  (errors only), and the three lines the JVM prints past log4j (its incubator modules, the
  shell's default level and how to change it) are dropped from its standard error. ``verbose=True`` keeps Spark's own defaults and every line.
  A failed task's log lines (:func:`quiet_task_failures`) are kept off where a failure is
  expected and said otherwise (evalwh's reader's job, which Spark SQL's reader then replaces).
* **Shuffle partitions.** Spark's default of 200 shuffle partitions turns every aggregate of
  a small cluster into hundreds of tiny tasks; unless the configuration names a number, it is
  three per core the session has (at least four), and adaptive execution coalesces further.
  Files are listed once, on the driver (:func:`tune`).
* **A local master's JVM.** With ``local[N]`` the driver's JVM is the executor too, and most
  of its CPU on an evaluation goes to Spark's own start, the just-in-time compilers and the
  collector, not to the data (docs/spark.md, "Settings"). Unless the configuration names
  them, a local session therefore runs without the web UI and its JVM with
  :data:`LOCAL_JAVA_OPTIONS`, unless the JVM itself goes through every line (Spark SQL's
  reader, asked for or where evalwh's cannot be used, or an export of
  :data:`SECOND_TIER_ROWS` ranked rows or more read as Parquet),
  where the second JIT tier pays for its compiler (``lean_jvm=False``). A cluster's master keeps Spark's defaults (long-lived
  executors, a UI to watch); the same options can be given there with ``--conf``.
* **Python on the executors.** A local session's executors are this machine: their Python
  workers run this interpreter (``PYSPARK_PYTHON``, unless set or configured), so that evalwh's
  reader on the executors finds evalwh. On a cluster, ``spark.pyspark.python`` says which.
* **pandas.** pyspark warns (FutureWarning) that it does not fully support pandas 3. evalwh
  never converts through pyspark's pandas path (values come back as Arrow tables, see
  :func:`evalwh.spark.evaluate`), so the notice is silenced, for that message only.

* **Java.** The driver is a JVM that pyspark starts through Spark's ``spark-class`` script,
  which runs ``$JAVA_HOME/bin/java`` when ``JAVA_HOME`` is set and ``java`` on ``PATH``
  otherwise. Without one the script prints two lines and pyspark raises
  ``JAVA_GATEWAY_EXITED``; :func:`java_runtime` looks in the same two places first, and
  :func:`start` says in one line what it looked for and how to install a runtime.

May import: :mod:`evalwh.errors` (pyspark is imported inside the functions).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
# Lines of the driver JVM's standard error that say nothing to an evalwh user: the JVM's note
# on its incubator modules, and the level Spark's shell logging sets for pyspark (printed to
# standard error directly, whatever the log4j2 configuration says) and how to change it.
_NOISE = (
    "WARNING: Using incubator modules",
    "Setting default log level to",
    "To adjust logging level use sc.setLogLevel",
)


# The JVM options of a local session's driver (its executor too), unless
# spark.driver.extraJavaOptions is configured: the first JIT tier only (C1: evalwh's jobs are
# short, and on TREC-8 the second tier's compiler took more CPU than the code it compiled
# saved: 80 CPU s for the whole job instead of 131, docs/spark.md) and the serial collector
# (no concurrent collector threads on a machine of few cores).
LOCAL_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
# ... except when the JVM itself works through every line (Spark SQL's reader), or through this
# many ranked rows or more (an export's run_results read as Parquet): C1's code is slower per
# row, and past about 15 M rows the second tier pays for its compiler. Measured on L's export (25 M rows), local[2]: the tasks'
# own CPU 152.5 s under C1 against 67.5 under C2, which took 38.7 to compile; 3.4 CPU µs more
# per row under C1 against about 50 CPU s of C2's compiling on TREC-8: even at 15 M rows.
SECOND_TIER_ROWS = 15_000_000
# Spark settings of a local session, unless configured.
LOCAL_SETTINGS = {"spark.ui.enabled": "false"}

JAVA_NEEDED = 17  # (Spark 4 runs on Java 17 and 21)
JAVA_INSTALL = "apt-get install openjdk-17-jre-headless, or any Java 17+ runtime"


def java_runtime() -> str | None:
    """The ``java`` Spark's launcher would run, if it is there: ``$JAVA_HOME/bin/java``, else ``java`` on PATH.

    As ``spark-class`` chooses: a set ``JAVA_HOME`` wins, even when it holds no Java (then
    this is None, whatever PATH holds). The test suite skips the Spark tests when this is None.
    """
    home = os.environ.get("JAVA_HOME")
    if home:
        java = Path(home) / "bin" / "java"
        return str(java) if java.is_file() and os.access(java, os.X_OK) else None
    return shutil.which("java")


def java_version(java: str) -> int | None:
    """The feature version (17, 21, ...) of the runtime ``java``; None when it cannot be told.

    Read from the runtime's ``release`` file (no JVM started), else from ``java -version``.
    """
    home = Path(os.path.realpath(java)).parent.parent
    try:
        text = (home / "release").read_text(errors="replace")
    except OSError:
        try:
            done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        text = done.stderr + done.stdout
    match = re.search(r'version\s*=?\s*"(?:1\.)?(\d+)', text, re.IGNORECASE) or re.search(
        r'JAVA_VERSION="(?:1\.)?(\d+)', text
    )
    return int(match.group(1)) if match else None


def require_java() -> str:
    """The ``java`` Spark will run, or one line saying what was looked for and how to install one.

    Raises:
        EvalWhError: when ``JAVA_HOME`` names no Java, no ``java`` is on PATH, or the runtime
            is older than Java 17.
    """
    from evalwh.errors import EvalWhError

    java = java_runtime()
    home = os.environ.get("JAVA_HOME")
    if java is None:
        looked = (
            f"JAVA_HOME={home} holds no bin/java (a set JAVA_HOME is used instead of PATH; unset it or fix it)"
            if home
            else "JAVA_HOME is not set and there is no java on PATH"
        )
        raise EvalWhError(f"Spark needs a Java {JAVA_NEEDED} runtime and found none: {looked}; install one ({JAVA_INSTALL})")
    version = java_version(java)
    if version is not None and version < JAVA_NEEDED:
        raise EvalWhError(
            f"Spark needs a Java {JAVA_NEEDED} runtime or newer; {java} is Java {version}; "
            f"install one ({JAVA_INSTALL}) and point JAVA_HOME at it"
        )
    return java


def quiet_pandas_notice() -> None:
    """Silence pyspark's FutureWarning about pandas 3 (see the module docstring)."""
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
    )


@contextmanager
def _filtered_stderr(verbose: bool) -> Iterator[None]:
    """While the driver JVM starts, give it a standard error that drops :data:`_NOISE`.

    The JVM inherits file descriptor 2 when pyspark spawns it; a pipe stands in for it during
    the start, and a daemon thread copies every other line to the real standard error for as
    long as the JVM lives.
    """
    if verbose:
        yield
        return
    try:
        saved = os.dup(2)
    except OSError:  # no standard error to speak of
        yield
        return
    read_end, write_end = os.pipe()

    def copy() -> None:
        with os.fdopen(read_end, "rb") as lines, os.fdopen(saved, "wb", buffering=0) as out:
            for line in lines:
                if not line.decode("utf-8", "replace").startswith(_NOISE):
                    out.write(line)

    restore = os.dup(saved)
    threading.Thread(target=copy, name="evalwh-jvm-stderr", daemon=True).start()
    os.dup2(write_end, 2)
    os.close(write_end)
    try:
        yield
    finally:
        # this process writes to its own standard error again; the JVM keeps the pipe
        os.dup2(restore, 2)
        os.close(restore)


# Spark's loggers that report a failed task on the driver's standard error (a local master's
# executor is the driver's JVM): the task's stack trace, the task set's abort, a lost worker
_TASK_FAILURE_LOGGERS = (
    "org.apache.spark.executor.Executor",
    "org.apache.spark.scheduler.TaskSetManager",
    "org.apache.spark.scheduler.TaskSchedulerImpl",
    "org.apache.spark.api.python.PythonRunner",
)


@contextmanager
def quiet_task_failures(spark: Any) -> Iterator[None]:
    """Spark's own log lines of a failed task kept off for a block, where the session logs
    errors only (evalwh's quiet default).

    The block is evalwh's reader's job on the executors (:func:`evalwh.spark.files.load_runs`),
    whose failure is said in one line (:attr:`evalwh.spark.files.LoadedRuns.reader_line`),
    not with a Java stack trace. Loggers configured by name, and sessions that log more
    (``--verbose``), are left as they are; the temporary logger settings are removed after.
    """
    jvm = spark.sparkContext._jvm
    log4j = jvm.org.apache.logging.log4j
    context = log4j.LogManager.getContext(False)
    config = context.getConfiguration()
    configured = config.getLoggers()
    added = [
        name for name in _TASK_FAILURE_LOGGERS
        if not configured.containsKey(name)
        and config.getLoggerConfig(name).getLevel().isMoreSpecificThan(log4j.Level.ERROR)
    ]  # fmt: skip
    for name in added:
        config.addLogger(name, log4j.core.config.LoggerConfig(name, log4j.Level.OFF, True))
    if added:
        context.updateLoggers()
    try:
        yield
    finally:
        for name in added:
            config.removeLogger(name)
        if added:
            context.updateLoggers()


def start(
    master: str | None = None,
    *,
    verbose: bool = False,
    app_name: str = "evalwh",
    config: Mapping[str, str] | None = None,
    lean_jvm: bool = True,
) -> Any:
    """The active Spark session, or a new one on ``master``; quiet and tuned (module docstring).

    Args:
        master: A Spark master URL (``local[2]``, ``spark://host:7077``, ``yarn``). Without
            one, the active session is taken (spark-submit's), else a new session on the
            master the environment gives (spark-submit's, or ``local[*]``).
        verbose: Keep Spark's own logging (warnings and start-up lines).
        app_name: The application's name on the cluster.
        config: Further Spark settings (``spark.executor.memory``...), for a new session.
        lean_jvm: Whether a local JVM gets :data:`LOCAL_JAVA_OPTIONS`: yes when evalwh's reader
            hands it only the judged rows or an export is small; no when the JVM itself goes
            through every line (:func:`lean_for`).
    """
    quiet_pandas_notice()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        session = active
    else:
        remote = (master or "").startswith("sc://") or os.environ.get("SPARK_REMOTE")  # (Spark Connect: no JVM here)
        if not remote and not os.environ.get("PYSPARK_GATEWAY_PORT"):  # (spark-submit's gateway runs already)
            require_java()
        builder = SparkSession.builder.appName(app_name).config("spark.ui.showConsoleProgress", "false")
        if master is not None:
            builder = builder.master(master)
        settings = session_settings(master, config, verbose=verbose, lean_jvm=lean_jvm)
        if (master is None or master.startswith("local")) and "spark.pyspark.python" not in settings:
            # the executors of a local session are this machine: their Python workers (evalwh's
            # reader on the executors, files.load_runs(reader="evalwh")) run this interpreter,
            # where evalwh is installed, not whichever python3 the PATH finds
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        for key, value in settings.items():
            builder = builder.config(key, value)
        with _filtered_stderr(verbose):
            session = builder.getOrCreate()
    if not verbose:
        session.sparkContext.setLogLevel("ERROR")
    tune(session)
    return session


def session_settings(
    master: str | None, config: Mapping[str, str] | None = None, *, verbose: bool = False, lean_jvm: bool = True
) -> dict[str, str]:
    """The settings :func:`start` gives a new session on ``master``: ``config`` and evalwh's own.

    A local master (:func:`is_local`) gets :data:`LOCAL_SETTINGS` and, unless
    ``spark.driver.extraJavaOptions`` is configured or ``lean_jvm`` is false (:func:`lean_for`),
    :data:`LOCAL_JAVA_OPTIONS`;
    without ``verbose`` the driver's JVM also gets the quiet log4j2 configuration (added to
    any JVM options configured). What ``config`` names wins.

    Examples:
        >>> session_settings("local[2]")["spark.driver.extraJavaOptions"].split()[:2]
        ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC']
        >>> session_settings("local[2]", lean_jvm=False)["spark.driver.extraJavaOptions"].split()[0][:20]
        '-Dlog4j2.configurati'
        >>> "spark.driver.extraJavaOptions" in session_settings("spark://host:7077", verbose=True)
        False
    """
    local = is_local(master)
    settings = {**(LOCAL_SETTINGS if local else {}), **(config or {})}
    lean = local and lean_jvm
    options = [settings["spark.driver.extraJavaOptions"]] if "spark.driver.extraJavaOptions" in settings else (
        [LOCAL_JAVA_OPTIONS] if lean else []
    )
    if not verbose:
        options.append(f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}")
    options = [o for o in options if o.strip()]
    if options:
        settings["spark.driver.extraJavaOptions"] = " ".join(options)
    return settings


def lean_for(reader: str, export_rows: int | None = None, *, c_reader: bool = True) -> bool:
    """Whether a local session's JVM runs lean (:data:`LOCAL_JAVA_OPTIONS`) for this input.

    ``reader`` is ``evalwh`` (the C reader on the executors hands the JVM only the judged
    rows and each list's length: lean) or ``spark`` (Spark SQL's reader: the JVM parses,
    checks and ranks every line itself: Spark's default JVM); ``c_reader`` says whether the
    C reader can be used at all (a local master's executors are this interpreter:
    :func:`evalwh.spark.executors.reader_here`; not with excluded documents), else Spark SQL
    reads every line after all; ``export_rows``, for an export read as Parquet, is its
    ranked rows: lean below :data:`SECOND_TIER_ROWS`.

    Examples:
        >>> lean_for("evalwh"), lean_for("spark"), lean_for("spark", 6_000_000), lean_for("spark", 25_000_000)
        (True, False, True, False)
        >>> lean_for("evalwh", c_reader=False)
        False
    """
    if export_rows is not None:
        return export_rows < SECOND_TIER_ROWS
    return reader == "evalwh" and c_reader


def is_local(master: str | None) -> bool:
    """Whether a new session on ``master`` is a local one that evalwh starts (``local[N]``).

    Without a master: ``local[*]``, unless spark-submit started the JVM (its master and
    settings are kept as given) or ``PYSPARK_SUBMIT_ARGS`` names another master.
    """
    if master is None:
        if os.environ.get("PYSPARK_GATEWAY_PORT") or os.environ.get("SPARK_REMOTE"):
            return False
        found = re.search(r"--master\s+(\S+)", os.environ.get("PYSPARK_SUBMIT_ARGS", ""))
        master = found.group(1) if found else "local[*]"
    return master == "local" or master.startswith("local[")


def tune(session: Any) -> None:
    """Shuffle partitions for the cores the session has, file listing on the driver.

    Settings the configuration names are left as they are. evalwh lists the files itself
    (:func:`evalwh.spark.files.list_files`) and hands Spark the paths; above 32 paths Spark
    would list them again in a job of one task per path, so that threshold is raised.
    """
    context = session.sparkContext
    given = context.getConf()
    if not given.contains("spark.sql.sources.parallelPartitionDiscovery.threshold"):
        session.conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", "100000")
    if given.contains("spark.sql.shuffle.partitions"):
        return
    cores = max(int(context.defaultParallelism), 1)
    session.conf.set("spark.sql.shuffle.partitions", str(max(4, 3 * cores)))
    session.conf.set("spark.sql.adaptive.enabled", "true")
