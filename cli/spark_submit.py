"""The entry point for ``spark-submit``: ``evalwh spark`` with the session spark-submit made.

Usage::

    spark-submit [spark options] "$(python -c 'import evalwh.cli.spark_submit as m; print(m.__file__)')" \\
        eval --qrels QRELS RUNS... -m AP

spark-submit runs this file as the driver program with the arguments after it; without
``--master`` the command takes spark-submit's session (master, executors, configuration).
"""

from __future__ import annotations


def main() -> None:
    """Run the ``evalwh spark`` command group on this process's arguments."""
    from evalwh.cli.spark import app

    app(prog_name="evalwh spark")


if __name__ == "__main__":
    main()
