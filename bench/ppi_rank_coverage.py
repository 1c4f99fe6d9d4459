"""Coverage of the rank intervals under prediction-powered estimates on TREC-8 (methods §15.5).

Usage: python bench/ppi_rank_coverage.py TREC8_DIR [REPS] [SEED] [WAREHOUSE] [REPLICATES] [WIDTHS]

The setting of ``bench/ppi_coverage.py`` (TREC-8's official qrels as the truth, the same two
simulated judges as the machine, evalwh's own ``draw_sample`` drawing audits of 2, 5, 10 and 20%
of the pairs or of the 50 topics), but what is checked is each run's rank interval from
:func:`evalwh.stats.ppi.rank_intervals` (a percentile interval of bootstrap ranks, 95%), against
the run's rank under the official scores (competition ranks, 1 the best, over the 129 runs).
Printed per judge, design, size and measure: the share of (repetition, run) intervals that hold
the official rank, averaged over runs, with its Monte Carlo standard error over repetitions
(the runs share each repetition's audit) and its lowest run; the mean length of an interval in
ranks (``high - low + 1``); the median over repetitions of the bootstrap's scale ``kappa``
(:func:`evalwh.stats.ppi.rank_scale`, widening it to the score intervals); and the coverage and
length of two other intervals from the same bootstrap draws: the tuned estimates' unwidened
(``kappa = 1``) and the audit-only estimates' (``lambda = 0``) widened to their own intervals.
The weight is the one :func:`evalwh.stats.ppi.design_estimate` tunes (shared by the runs), and
the standard errors and degrees of freedom its. Pairs audits for P@10 only (MAP and nDCG@10 are
refused there).

WIDTHS ``t`` (the default, what ``evalwh audit estimate --ranks`` does) widens the bootstrap to
Student's score intervals; ``machine`` to a topics audit's score intervals as they are made since
2026-12-07, with :func:`evalwh.stats.ppi.machine_quantiles`'s points (half their lengths:
measured, not adopted, methods §15.5).

Not a timing benchmark. WAREHOUSE (default /tmp/ppi_bench.duckdb) is reused when present, as
``ppi_coverage.py`` leaves it; REPLICATES (default 1000) is the bootstrap's size.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd
from ppi_coverage import MEASURES, SHARES, draw_audits, load_setting, topic_count

from evalwh.stats.ppi import design_estimate, machine_quantiles, rank_intervals, rank_scale
from evalwh.stats.rank_intervals import competition_ranks


def main(trec8: str, reps: int, seed: int, db: str, replicates: int, widths: str = "t") -> None:
    judges, runs, topics, frame, matrix, human_gain, matrices = load_setting(trec8, seed, db)

    def topic_matrix(qid: str, measure: str) -> np.ndarray:
        return matrices[(qid, measure)]

    true_rank = {m: competition_ranks(topic_matrix("default", m).sum(axis=0)) for m in MEASURES}
    np.testing.assert_array_equal(true_rank["P@10"], competition_ranks(matrix.T @ human_gain))
    rows = []
    started = time.perf_counter()
    bound = np.asarray(abs(matrix).max(axis=0).todense()).ravel()  # a position's weight, gain 1
    for j, (judge, labels) in enumerate(judges.items()):
        qid = f"judge{j}_s{seed}"
        machine_gain = labels["annotation"].to_numpy(float)
        frame_j = frame.assign(machine_grade=machine_gain)
        keys = frame_j.set_index(["query_id", "doc_id"]).index
        points: dict[tuple[str, int], tuple[float, float] | None] = {}
        for share in SHARES:
            cells: dict[tuple[str, str], list[np.ndarray]] = {}
            for rep in range(reps):
                draw_seed, idx, chosen = draw_audits(frame_j, keys, topics, share, rep, seed)  # ppi_coverage.py's
                size = len(idx)
                w = matrix[idx].toarray()
                y, f, total = w * human_gain[idx, None], w * machine_gain[idx, None], matrix.T @ machine_gain
                e = design_estimate(y, f, total, population=[len(frame)], bound=bound)
                cells.setdefault(("pairs", "P@10"), []).append(
                    _cell(_three(y, f, total, e, [len(frame)], replicates, draw_seed, "t"), true_rank["P@10"]))
                for m in MEASURES:
                    ys, fs = topic_matrix("default", m), topic_matrix(qid, m)
                    if (m, len(chosen)) not in points:  # evalwh audit estimate's points for a topics audit
                        points[(m, len(chosen))] = machine_quantiles(fs, len(chosen)) if widths == "machine" else None
                    e = design_estimate(ys[chosen], fs[chosen], fs.sum(axis=0), population=[len(topics)],
                                        quantiles=points[(m, len(chosen))])  # fmt: skip
                    cells.setdefault(("topics", m), []).append(_cell(
                        _three(ys[chosen], fs[chosen], fs.sum(axis=0), e, [len(topics)], replicates, draw_seed, widths),
                        true_rank[m]))  # fmt: skip
            for (design, m), values in cells.items():
                stack = np.stack(values)  # reps x 7 x runs
                covered = stack[:, 0].mean(axis=0)
                rows.append({"judge": judge, "design": design, "share": share,
                             "units": size if design == "pairs" else topic_count(share, len(topics)),
                             "measure": m, "coverage": covered.mean(),
                             "mc s.e.": stack[:, 0].mean(axis=1).std(ddof=1) / np.sqrt(len(stack)),
                             "lowest run": covered.min(), "length": stack[:, 1].mean(),
                             "scale": np.median(stack[:, 6, 0]),
                             "unwidened coverage": stack[:, 2].mean(), "unwidened length": stack[:, 3].mean(),
                             "audit-only coverage": stack[:, 4].mean(), "audit-only length": stack[:, 5].mean()})  # fmt: skip
            print(f"{judge}, {share:.0%}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    print(f"# {reps} repetitions, {len(runs)} runs, seed {seed}, {replicates} bootstrap replicates\n")
    print(pd.DataFrame(rows).to_markdown(index=False, floatfmt=".3f"))


def _three(y, f, total, e, population, replicates: int, seed: int, widths: str) -> tuple[list, float]:  # type: ignore[no-untyped-def]
    """The rank intervals of the tuned estimates widened to their intervals (evalwh's), unwidened
    (``scale = 1``), and of the audit-only estimates widened to theirs (the same bootstrap
    draws); and the tuned intervals' scale. ``widths``: ``t`` (Student's intervals, evalwh's) or
    ``machine`` (half the lengths of ``e``'s intervals)."""
    common = {"population": population, "replicates": replicates, "seed": seed}
    if widths == "machine":
        tuned, human = {"half_width": (e.upper - e.lower) / 2}, {"half_width": (e.human_upper - e.human_lower) / 2}
    else:
        tuned, human = {"se": e.se, "df": e.df}, {"se": e.human_se, "df": e.df}
    found = [rank_intervals(y, f, total, e.weight, **tuned, **common),
             rank_intervals(y, f, total, e.weight, **common),
             rank_intervals(y, f, total, 0 * e.weight, **human, **common)]  # fmt: skip
    return found, rank_scale(y, f, e.weight, tuned.get("se"), tuned.get("df"), population=population,
                             half_width=tuned.get("half_width"))  # fmt: skip


def _cell(three: tuple[list, float], truth: np.ndarray) -> np.ndarray:
    """Per run: covered and length of each of :func:`_three`'s intervals, in its order, then the scale."""
    found, kappa = three
    out = []
    for r in found:
        out += [(r.low <= truth) & (truth <= r.high), r.high - r.low + 1]
    return np.stack([*out, np.full(len(truth), kappa)]).astype(float)


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    main(args[0], int(args[1]) if len(args) > 1 else 100, int(args[2]) if len(args) > 2 else 1,
         args[3] if len(args) > 3 else "/tmp/ppi_bench.duckdb", int(args[4]) if len(args) > 4 else 1000,
         args[5] if len(args) > 5 else "t")  # fmt: skip
