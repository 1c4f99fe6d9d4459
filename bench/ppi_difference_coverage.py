"""Coverage of the prediction-powered paired differences of runs on TREC-8 (methods §15.5, §15.6).

Usage: python bench/ppi_difference_coverage.py TREC8_DIR [REPS] [SEED] [WAREHOUSE] [PAIRS]

The setting and the audits of ``bench/ppi_coverage.py`` (its :func:`load_setting` and
:func:`draw_audits`: TREC-8's official qrels the truth, the seed's two simulated judges, audits of
2, 5, 10 and 20% of the pairs or of the topics, REPS of each, default 200). PAIRS (default 300)
pairs of runs are drawn once (``numpy.random.default_rng([SEED, 13])``, without replacement among
the 8,256) and are estimated as ``audit estimate --differences`` estimates any family of pairs:
:func:`evalwh.stats.ppi.design_estimate` on the differences of the two runs' values, with the weight
of all pairs of the 129 runs (``tuning``: the runs' values centred on their mean, the weight
re-estimated so in the jackknife), a pairs audit's floor ``bound_a + bound_b``, Student's t with no
correction (``--correction none``). Printed per judge, design, size and measure: how often the
95% interval held the official difference (averaged over the pairs, with its Monte Carlo
standard error over repetitions), its lowest pair, the mean width beside the audit-only
interval's (both clipped to ``[-1, 1]``, methods §15.4), and how often the interval excluded 0 on the wrong side of the official difference
(a reversed decision; pairs whose official difference is 0 are left out of that count) or on the
right side (a decision that the full qrels agree with).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd
from ppi_coverage import MEASURES, SHARES, draw_audits, load_setting, topic_count

from evalwh.stats.ppi import design_estimate


def _cells(e, truth: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Per pair of runs: covered, width, audit-only width, reversed, agreed."""
    sign = np.sign(truth)
    reversed_ = ((e.lower > 0) & (sign < 0)) | ((e.upper < 0) & (sign > 0))
    agreed = ((e.lower > 0) & (sign > 0)) | ((e.upper < 0) & (sign < 0))
    return np.stack([(e.lower <= truth + 1e-12) & (truth - 1e-12 <= e.upper), e.upper - e.lower,
                     e.human_upper - e.human_lower, reversed_, agreed]).astype(float)  # fmt: skip


def main(trec8: str, reps: int, seed: int, db: str, n_pairs: int) -> None:
    judges, runs, topics, frame, matrix, human_gain, matrices = load_setting(trec8, seed, db)
    everything = np.array([(a, b) for a in range(len(runs)) for b in range(a + 1, len(runs))])
    chosen = everything[np.sort(np.random.default_rng([seed, 13]).choice(len(everything), n_pairs, replace=False))]
    a, b = chosen[:, 0], chosen[:, 1]
    truth = {m: (matrices[("default", m)][:, a] - matrices[("default", m)][:, b]).sum(axis=0) for m in MEASURES}
    bound = np.asarray(abs(matrix).max(axis=0).todense()).ravel()
    rows, started = [], time.perf_counter()
    for j, (judge, labels) in enumerate(judges.items()):
        machine_gain = labels["annotation"].to_numpy(float)
        frame_j = frame.assign(machine_grade=machine_gain)
        keys = frame_j.set_index(["query_id", "doc_id"]).index
        total = matrix.T @ machine_gain
        for share in SHARES:
            cells: dict[tuple[str, str], list[np.ndarray]] = {}
            for rep in range(reps):
                drawn = draw_audits(frame_j, keys, topics, share, rep, seed)
                w = matrix[drawn.pair_rows].toarray()
                y, f = w * human_gain[drawn.pair_rows, None], w * machine_gain[drawn.pair_rows, None]
                e = design_estimate(y[:, a] - y[:, b], f[:, a] - f[:, b], total[a] - total[b],
                                    population=[len(frame)], bound=bound[a] + bound[b], limits=(-1.0, 1.0),
                                    tuning=(y - y.mean(axis=1, keepdims=True), f - f.mean(axis=1, keepdims=True)))  # fmt: skip
                cells.setdefault(("pairs", "P@10"), []).append(_cells(e, truth["P@10"]))
                picked = drawn.topic_rows
                for m in MEASURES:
                    ys, fs = matrices[("default", m)], matrices[(f"judge{j}_s{seed}", m)]
                    e = design_estimate(ys[picked][:, a] - ys[picked][:, b], fs[picked][:, a] - fs[picked][:, b],
                                        (fs[:, a] - fs[:, b]).sum(axis=0), population=[len(topics)],
                                        limits=(-1.0, 1.0), tuning=(ys[picked] - ys[picked].mean(axis=1, keepdims=True),
                                                                    fs[picked] - fs[picked].mean(axis=1, keepdims=True)))  # fmt: skip
                    cells.setdefault(("topics", m), []).append(_cells(e, truth[m]))
            for (design, m), values in cells.items():
                stack = np.stack(values)  # reps x 5 x pairs
                covered = stack[:, 0].mean(axis=0)
                nonzero = np.abs(truth[m]) > 1e-12
                rows.append({"judge": judge, "design": design, "share": share,
                             "units": int(round(share * len(frame))) if design == "pairs" else topic_count(share, len(topics)),
                             "measure": m, "coverage": covered.mean(),
                             "mc s.e.": stack[:, 0].mean(axis=1).std(ddof=1) / np.sqrt(len(stack)),
                             "lowest pair": covered.min(), "width": stack[:, 1].mean(),
                             "audit-only width": stack[:, 2].mean(),
                             "reversed": stack[:, 3][:, nonzero].mean(), "agreed": stack[:, 4][:, nonzero].mean()})  # fmt: skip
            print(f"{judge}, {share:.0%}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    print(f"# {reps} repetitions, {n_pairs} of the {len(everything):,} pairs of {len(runs)} runs, seed {seed}; "
          "Student's t, no correction\n")  # fmt: skip
    print(pd.DataFrame(rows).to_markdown(index=False, floatfmt=".3f"))


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    main(args[0], int(args[1]) if len(args) > 1 else 200, int(args[2]) if len(args) > 2 else 1,
         args[3] if len(args) > 3 else "/tmp/ppi_bench.duckdb", int(args[4]) if len(args) > 4 else 300)  # fmt: skip
