"""CPU seconds of a command and of every process under it, the ones it leaves behind included.

    python bench/tree_cpu.py -- evalwh spark eval --qrels q.txt 'runs/*.gz' --master 'local[2]'

The command runs as a child of this process, which is made a *subreaper*
(``prctl(PR_SET_CHILD_SUBREAPER)``, Linux): a descendant whose parent exits (pyspark's Python
daemon and workers when the JVM goes, the JVM when its launcher script goes) is handed to this
process instead of to init, and this process waits for every one of them. The kernel adds a
waited-for process's CPU time, and that of the processes it waited for, to this process's
``RUSAGE_CHILDREN``: the figure printed is therefore every process of the command's tree
(the Python driver, the JVM with its executor threads, the Python workers), exactly, not
sampled. ``/usr/bin/time`` alone misses the processes that outlive their parent.

One line on standard error at the end: CPU seconds (user + system), wall seconds, the load
average before and after, and the command's exit status (also this script's).
"""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def main() -> int:
    args = sys.argv[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        raise SystemExit("usage: python bench/tree_cpu.py -- COMMAND [ARGS...]")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")
    load_before = os.getloadavg()[0]
    began = time.perf_counter()
    child = subprocess.Popen(args)
    status = child.wait()
    wall = time.perf_counter() - began
    # the orphans handed to this process: wait for each (their CPU joins RUSAGE_CHILDREN)
    while True:
        try:
            os.wait()
        except ChildProcessError:
            break
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"tree_cpu: {used.ru_utime + used.ru_stime:.1f} CPU s (user {used.ru_utime:.1f}, system "
        f"{used.ru_stime:.1f}), {wall:.1f} s wall, load {load_before:.2f} -> {os.getloadavg()[0]:.2f}, "
        f"exit {status}",
        file=sys.stderr,
    )
    return status


if __name__ == "__main__":
    sys.exit(main())
