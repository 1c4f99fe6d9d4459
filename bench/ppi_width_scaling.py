"""Can one factor on the intervals' half-widths bring every coverage cell into 93-97%? (methods §15.6)

Usage: python bench/ppi_width_scaling.py TREC8_DIR [REPS] [SEED] [WAREHOUSE]

The setting, audits and intervals of ``bench/ppi_coverage.py`` (its :func:`load_setting` and
:func:`draw_audits`; the prediction-powered intervals of ``evalwh audit estimate``'s defaults:
Student's t for a pairs audit, the machine's points for a topics audit), with both half-widths
of every interval multiplied by a factor ``c`` before it is checked against the official score.
``c = 1`` is evalwh's interval. Printed per judge, design, size and measure: the coverage,
averaged over the 129 runs, at each ``c``. A cell is within 93-97% for the ``c`` in some range;
if the ranges of two cells are disjoint, no rule that scales the interval by a constant (even one
per design, size and measure) brings both in. Not a timing benchmark.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
from ppi_coverage import MEASURES, SHARES, draw_audits, load_setting

from evalwh.stats.ppi import design_estimate, machine_quantiles

FACTORS = np.array([0.80, 0.85, 0.90, 0.95, 1.00, 1.05, 1.10, 1.20])


def main(trec8: str, reps: int, seed: int, db: str) -> None:
    judges, runs, topics, frame, matrix, human_gain, matrices = load_setting(trec8, seed, db)
    truth = {m: matrices[("default", m)].sum(axis=0) for m in MEASURES}
    bound = np.asarray(abs(matrix).max(axis=0).todense()).ravel()
    rows = []
    for j, (judge, labels) in enumerate(judges.items()):
        machine = labels["annotation"].to_numpy(float)
        frame_j = frame.assign(machine_grade=machine)
        keys = frame_j.set_index(["query_id", "doc_id"]).index
        points: dict[tuple[str, int], tuple[float, float] | None] = {}
        for share in SHARES:
            held: dict[tuple[str, str], list[np.ndarray]] = {}
            for rep in range(reps):
                drawn = draw_audits(frame_j, keys, topics, share, rep, seed)
                w = matrix[drawn.pair_rows].toarray()
                e = design_estimate(w * human_gain[drawn.pair_rows, None], w * machine[drawn.pair_rows, None],
                                    matrix.T @ machine, population=[len(frame)], bound=bound)  # fmt: skip
                cells = [("pairs", "P@10", e, truth["P@10"])]
                for m in MEASURES:
                    y, f = matrices[("default", m)], matrices[(f"judge{j}_s{seed}", m)]
                    key = (m, len(drawn.topic_rows))
                    if key not in points:
                        points[key] = machine_quantiles(f, len(drawn.topic_rows))
                    cells.append(("topics", m, design_estimate(y[drawn.topic_rows], f[drawn.topic_rows], f.sum(axis=0),
                                                               population=[len(topics)], quantiles=points[key]), truth[m]))
                for design, m, e, t in cells:  # unclipped: clipping to [0, 1] changes no coverage
                    low = e.estimate - (e.estimate - e.lower)[None] * FACTORS[:, None]
                    high = e.estimate + (e.upper - e.estimate)[None] * FACTORS[:, None]
                    held.setdefault((design, m), []).append(((low <= t + 1e-12) & (t - 1e-12 <= high)).mean(axis=1))
            for (design, m), values in held.items():
                rows.append({"judge": judge, "design": design, "share": share, "measure": m,
                             **{f"c={c:.2f}": v for c, v in zip(FACTORS, np.mean(values, axis=0), strict=True)}})  # fmt: skip
            print(f"{judge}, {share:.0%}", file=sys.stderr, flush=True)
    table = pd.DataFrame(rows)
    fine = np.linspace(FACTORS[0], FACTORS[-1], 401)
    spans = []
    for values in table[[f"c={c:.2f}" for c in FACTORS]].to_numpy(float):
        inside = fine[(np.interp(fine, FACTORS, values) >= 0.93) & (np.interp(fine, FACTORS, values) <= 0.97)]
        spans.append(f"{inside.min():.3f}-{inside.max():.3f}" if len(inside) else "none")
    table["c within 93-97%"] = spans
    print(f"# seed {seed}, {reps} audits per cell; both half-widths times c (c = 1: evalwh's interval); "
          f"the last column: the c (linearly interpolated, {FACTORS[0]:.2f}-{FACTORS[-1]:.2f}) that put the cell in 93-97%\n")
    print(table.to_markdown(index=False, floatfmt=".3f"))


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    main(args[0], int(args[1]) if len(args) > 1 else 200, int(args[2]) if len(args) > 2 else 1,
         args[3] if len(args) > 3 else "/tmp/ppi_bench.duckdb")  # fmt: skip
