"""A Spark standalone cluster on this machine: a master and workers as separate processes.

What the tests and ``bench/spark.py`` run ``evalwh spark`` against, to try the cluster path
(a driver, executors in other JVMs, shuffles over the network) without a cluster: pyspark
ships Spark's launcher (``bin/spark-class``), which starts
``org.apache.spark.deploy.master.Master`` and ``org.apache.spark.deploy.worker.Worker`` as on
any cluster. Everything binds to 127.0.0.1 on free ports; :class:`StandaloneCluster` waits
until every worker has registered (the master's JSON status page lists it ALIVE) and stops
exactly the processes it started, by their ids.

May import: :mod:`evalwh.errors` (and the standard library).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from evalwh.errors import EvalWhError

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"


def spark_class() -> Path:
    """pyspark's ``bin/spark-class``, the launcher of Spark's own daemons."""
    import pyspark

    path = Path(pyspark.__file__).parent / "bin" / "spark-class"
    if not path.is_file():
        raise EvalWhError(f"{path}: pyspark ships no bin/spark-class here; install pyspark from PyPI")
    return path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (just now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class StandaloneCluster:
    """A master and ``workers`` workers on 127.0.0.1, started on enter and stopped on exit.

    Args:
        directory: Where the daemons' logs and the workers' scratch space go.
        workers: How many workers.
        cores: Cores each worker offers.
        memory: Memory each worker offers to executors (``1g``).
        timeout: Seconds to wait for every worker to register.

    Attributes:
        url: The master's URL (``spark://127.0.0.1:PORT``), for ``--master``.
        status_url: The master's JSON status page.
        pids: The process ids of the master and the workers.
    """

    def __init__(
        self, directory: str | os.PathLike[str], *, workers: int = 2, cores: int = 1,
        memory: str = "1g", timeout: float = 120.0,
    ) -> None:
        self.directory = Path(directory)
        self.workers, self.cores, self.memory, self.timeout = workers, cores, memory, timeout
        self.processes: list[subprocess.Popen[bytes]] = []
        self.url = ""
        self.status_url = ""

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]

    def _start(self, name: str, args: list[str]) -> None:
        environment = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1"}
        log = (self.directory / f"{name}.log").open("wb")
        try:
            process = subprocess.Popen(
                [str(spark_class()), *args], stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, env=environment, cwd=self.directory,
            )
        finally:
            log.close()
        self.processes.append(process)

    def __enter__(self) -> StandaloneCluster:
        self.directory.mkdir(parents=True, exist_ok=True)
        port, ui = free_port(), free_port()
        self.url = f"spark://127.0.0.1:{port}"
        self.status_url = f"http://127.0.0.1:{ui}/json/"
        try:
            self._start("master", [MASTER, "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui)])
            for index in range(self.workers):
                scratch = self.directory / f"worker{index}"
                scratch.mkdir(exist_ok=True)
                self._start(
                    f"worker{index}",
                    [WORKER, "--host", "127.0.0.1", "--port", str(free_port()), "--webui-port", str(free_port()),
                     "--cores", str(self.cores), "--memory", self.memory, "--work-dir", str(scratch), self.url],
                )
            self.wait()
        except BaseException:
            self.stop()
            raise
        return self

    def alive_workers(self) -> int:
        """How many workers the master lists as ALIVE (0 while it is not up)."""
        try:
            with urllib.request.urlopen(self.status_url, timeout=5) as response:
                status = json.load(response)
        except (urllib.error.URLError, OSError, ValueError):
            return 0
        return sum(1 for worker in status.get("workers", []) if worker.get("state") == "ALIVE")

    def wait(self) -> None:
        """Wait until every worker registered; a daemon that exits or a timeout is an error."""
        deadline = time.monotonic() + self.timeout
        while self.alive_workers() < self.workers:
            for process in self.processes:
                if process.poll() is not None:
                    raise EvalWhError(
                        f"a Spark daemon exited with status {process.returncode}; see the logs in {self.directory}"
                    )
            if time.monotonic() > deadline:
                raise EvalWhError(
                    f"{self.workers} Spark workers did not register with {self.url} in {self.timeout:.0f} s; "
                    f"see the logs in {self.directory}"
                )
            time.sleep(0.5)

    def stop(self) -> None:
        """Stop the processes this cluster started: terminate, wait, kill what is left."""
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes.clear()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()
