"""Coverage of the prediction-powered intervals on TREC-8 (methods §15.6, issue 53's done-when).

Usage: python bench/ppi_coverage.py TREC8_DIR [REPS] [SEED] [WAREHOUSE] [JUDGE] [DESIGNS]

TREC-8's official qrels are the truth (what people would say about every pooled pair). A
simulated machine judge labels every pooled pair (:func:`biased_judge`): its evidence for a
pair is the truth's grade shifted by a bias that depends on the topic (a random effect), on
how high the runs ranked the document (it is more lenient on documents ranked high) and on
the grade (it misses more relevant documents than it invents). For each repetition and audit
size (2, 5, 10 and 20% of the pairs, or of the 50 topics: ``ceil(share * 50)`` topics, at least
3, the smallest audit on which the tuned weight and its jackknife variance exist: 3, 3, 5, 10),
evalwh's own drawing (:func:`evalwh.methods.audits.draw_sample`) draws an audit, the truth
labels it, and every one of the 129 runs gets a 95% interval for P@10, MAP and nDCG@10 from
:func:`evalwh.stats.ppi.design_estimate` (the pairs design for P@10 only: MAP and nDCG@10 are
refused there, methods §15.3; on the same pairs audit, ``pairs, beta``: ``--interval beta``'s post-stratified
count and Jeffreys interval, :func:`evalwh.stats.ppi_counts.poststratified_count`, methods §15.7), a topics audit's with the points of
:func:`evalwh.stats.ppi.machine_quantiles` as ``evalwh audit estimate`` takes them (Student's t
interval's coverage beside it). Printed per judge, design, size and measure: the share of
(repetition, run) intervals that hold the run's official score (coverage, averaged over runs,
with its Monte Carlo standard error over repetitions, and its lowest run; the audit-only
interval's beside it), the mean width against the
audit-only interval's (both clipped to ``[0, 1]`` as ``audit estimate`` clips them, methods §15.4), the median effective number of human labels per audited unit, and
the machine-only score's bias (mean signed and mean absolute error over runs), and the share of
(repetition, run) intervals wider than the audit-only one. A second judge, with one global
bias (``evalwh.methods.budget.simulated_judge``), is run beside it.

Not a timing benchmark. WAREHOUSE (default /tmp/ppi_bench.duckdb) is reused when present;
JUDGE (0 or 1; ``all``, the default, both) runs one judge only, so that the two can run side by side; DESIGNS (``pairs``,
``topics`` or ``pairs,topics``, the default) the designs to run.
"""

from __future__ import annotations

import glob
import os
import sys
import time
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit

from evalwh import Warehouse
from evalwh.measures import catalog
from evalwh.methods.audits import draw_sample, gains, pair_values, rank_weights
from evalwh.methods.budget import simulated_judge
from evalwh.stats.ppi import design_estimate, machine_quantiles
from evalwh.stats.ppi_counts import poststratified_count

SHARES = (0.02, 0.05, 0.10, 0.20)
MEASURES = ("P@10", "AP", "nDCG@10")


def biased_judge(truth: pd.DataFrame, best_rank: pd.Series, *, seed: int = 0) -> pd.DataFrame:
    """A judge whose bias depends on the topic, the document's best rank and its grade.

    Evidence ``z = +1.5`` for a relevant pair, ``-1.5`` for a non-relevant one, plus: a
    topic effect ``u_t ~ N(0, 1)`` (some topics it finds easy to call relevant), ``+0.5 -
    0.35 * log2(best rank)`` (lenient at the top of the rankings, harsh deep down), ``-0.5``
    more for relevant pairs (it misses relevant documents), and noise ``N(0, 1)``. It says
    ``prob_yes = sigmoid(z)`` and the label ``prob_yes >= 0.5``.
    """
    rng = np.random.default_rng(seed)
    topics = truth["query_id"].unique()
    effect = dict(zip(topics, rng.normal(0.0, 1.0, len(topics)), strict=True))
    relevant = truth["relevance"].to_numpy(float) >= 1
    rank = best_rank.fillna(1000).to_numpy(float)
    z = (np.where(relevant, 1.5 - 0.5, -1.5) + truth["query_id"].map(effect).to_numpy(float)
         + 0.5 - 0.35 * np.log2(rank) + rng.normal(0.0, 1.0, len(truth)))  # fmt: skip
    prob = expit(z)
    return pd.DataFrame({"topic_id": truth["query_id"].to_numpy(str), "doc_id": truth["doc_id"].to_numpy(str),
                         "annotation": (prob >= 0.5).astype(int), "prob_yes": prob, "prob_no": 1 - prob})  # fmt: skip


class Setting(NamedTuple):
    """What the coverage benches share: the truth, the two judges and the runs' values."""

    judges: dict[str, pd.DataFrame]  # name -> the judge's labels of every pooled pair, pair order
    runs: list[str]
    topics: list[str]
    frame: pd.DataFrame  # query_id, doc_id, pair_no of every pooled pair
    matrix: Any  # sparse (pairs, runs): a pair's P@10 weight in a run's score, 0 outside its top ten
    human_gain: np.ndarray  # the truth's P@10 gain of every pair
    matrices: dict[tuple[str, str], np.ndarray]  # (qrels id, measure) -> (topics, runs) score / topics


def load_setting(trec8: str, seed: int, db: str) -> Setting:
    """TREC-8's truth and runs in the warehouse ``db`` (reused when present), the seed's two judges
    stored beside them (``judge0_s{seed}``, ``judge1_s{seed}``), and each run's per-topic scores."""
    fresh = not os.path.exists(db)
    with Warehouse(db) as wh:
        if fresh:
            wh.ingest_qrels(f"{trec8}/trec8.qrels", collection="trec8")
            wh.ingest_runs(sorted(glob.glob(f"{trec8}/runs/input.*.gz")), collection="trec8")
        truth = wh.sql("SELECT query_id, doc_id, relevance FROM qrels WHERE qrels_id = 'default' AND relevance >= 0 "
                       "ORDER BY query_id, doc_id")  # fmt: skip
        best = wh.sql("SELECT query_id, doc_id, min(rank) AS best_rank FROM run_results GROUP BY 1, 2")
        truth = truth.merge(best, on=["query_id", "doc_id"], how="left")
        judges = {"rank, grade and topic bias": biased_judge(truth, truth["best_rank"], seed=seed),
                  "one global bias": simulated_judge(truth, bias=1.0, seed=seed)}  # fmt: skip
        for i, labels in enumerate(judges.values()):
            qid = f"judge{i}_s{seed}"  # the judges depend on the seed: a reused warehouse keeps each seed's
            if fresh or qid not in set(wh.qrels_sets("trec8")["qrels_id"]):
                path = f"/tmp/ppi_bench_{qid}.csv"
                labels.to_csv(path, index=False)
                wh.ingest_qrels(path, collection="trec8", qrels_id=qid, replace=True)
        runs = wh.run_ids("trec8")
        per_topic = {
            qid: wh.evaluate(list(MEASURES), collection="trec8", qrels_id=qid, per_query=True)
            for qid in ("default", f"judge0_s{seed}", f"judge1_s{seed}")
        }
        frame = truth[["query_id", "doc_id"]].copy()
        frame["pair_no"] = np.arange(len(frame))
        wh.con.register("f", frame)
        positions = wh.sql("SELECT f.pair_no, r.run_id, r.rank FROM run_results AS r JOIN f USING (query_id, doc_id) "
                           "WHERE r.rank <= 10")  # fmt: skip
    run_no = {r: i for i, r in enumerate(runs)}
    positions["run_no"] = positions["run_id"].map(run_no)
    p10 = catalog.parse("P@10")
    topics = sorted(truth["query_id"].unique())
    matrix = pair_values(positions, len(frame), len(runs), len(topics), rank_weights(p10, positions["rank"].to_numpy()))
    human_gain = gains(p10, truth["relevance"].to_numpy(float))

    def pivot(qid: str, measure: str) -> np.ndarray:
        values = per_topic[qid]
        values = values[(values["measure"] == measure) & (values["query_id"] != "all")]
        table = values.pivot_table(index="query_id", columns="run_id", values="value", aggfunc="first")
        return table.reindex(index=topics, columns=runs).fillna(0.0).to_numpy(float) / len(topics)

    matrices = {(qid, m): pivot(qid, m) for qid in per_topic for m in MEASURES}
    return Setting(judges, runs, topics, frame, matrix, human_gain, matrices)


def main(trec8: str, reps: int, seed: int, db: str, only: int | None = None,
         designs: tuple[str, ...] = ("pairs", "topics")) -> None:
    judges, runs, topics, frame, matrix, human_gain, matrices = load_setting(trec8, seed, db)

    def topic_matrix(qid: str, measure: str) -> np.ndarray:
        return matrices[(qid, measure)]

    true_scores = {m: topic_matrix("default", m).sum(axis=0) for m in MEASURES}
    np.testing.assert_allclose(true_scores["P@10"], matrix.T @ human_gain, atol=1e-12)  # the two paths agree
    rows = []
    started = time.perf_counter()
    pair_bound = np.asarray(abs(matrix).max(axis=0).todense()).ravel()  # a position's weight, gain 1
    carry = (matrix != 0).astype(float).tocsr()  # a pair in a run's top ten
    for j, (judge, labels) in enumerate(judges.items()):
        if only is not None and j != only:
            continue
        qid = f"judge{j}_s{seed}"
        machine_gain = labels["annotation"].to_numpy(float)
        frame_j = frame.assign(machine_grade=machine_gain)
        keys = frame_j.set_index(["query_id", "doc_id"]).index
        points: dict[tuple[str, int], tuple[float, float] | None] = {}  # (measure, topics) -> u_low, u_high
        for share in SHARES:
            cells: dict[tuple[str, str], list[np.ndarray]] = {}
            for rep in range(reps):
                drawn = draw_audits(frame_j, keys, topics, share, rep, seed, pairs="pairs" in designs)
                size = int(round(share * len(frame)))
                if "pairs" in designs:
                    # pairs design, P@10
                    idx = drawn.pair_rows
                    w = matrix[idx].toarray()
                    e = design_estimate(w * human_gain[idx, None], w * machine_gain[idx, None],
                                        matrix.T @ machine_gain, population=[len(frame)], bound=pair_bound,
                                        limits=(0.0, 1.0))  # fmt: skip
                    cells.setdefault(("pairs", "P@10"), []).append(_cell(e, true_scores["P@10"]))
                    # the same audit, --interval beta (methods §15.7): groups by the judge's label
                    cells.setdefault(("pairs, beta", "P@10"), []).append(
                        _beta_cell(carry, idx, human_gain, machine_gain, e, true_scores["P@10"], len(topics) * 10))
                # topics design, every measure
                chosen = drawn.topic_rows
                for m in MEASURES if "topics" in designs else ():
                    y, f = topic_matrix("default", m), topic_matrix(qid, m)
                    if (m, len(chosen)) not in points:  # what evalwh audit estimate takes: the machine's own
                        points[(m, len(chosen))] = machine_quantiles(f, len(chosen))
                    e = design_estimate(y[chosen], f[chosen], f.sum(axis=0), population=[len(topics)],
                                        quantiles=points[(m, len(chosen))], limits=(0.0, 1.0))  # fmt: skip
                    cells.setdefault(("topics", m), []).append(_cell(e, true_scores[m]))
            for (design, m), values in cells.items():
                stack = np.stack(values)  # reps x 5 x runs
                covered = stack[:, 0].mean(axis=0)
                machine_error = stack[0, 4]
                rows.append({"judge": judge, "design": design, "share": share,
                             "units": size if design.startswith("pairs") else topic_count(share, len(topics)),
                             "measure": m, "coverage": covered.mean(),
                             # Monte Carlo standard error of the coverage: the runs share each
                             # repetition's audit, so the repetitions (not the intervals) are independent
                             "mc s.e.": stack[:, 0].mean(axis=1).std(ddof=1) / np.sqrt(len(stack)),
                             "lowest run": covered.min(),
                             "audit-only coverage": stack[:, 5].mean(), "t coverage": stack[:, 6].mean(),
                             "width": stack[:, 1].mean(), "audit-only width": stack[:, 2].mean(),
                             "wider than audit-only": (stack[:, 1] > stack[:, 2] + 1e-12).mean(),
                             "effective n / n": np.median(stack[:, 3]), "machine bias": machine_error.mean(),
                             "machine abs. error": np.abs(machine_error).mean()})  # fmt: skip
            for m in ("AP", "nDCG@10") if "pairs" in designs else ():
                rows.append({"judge": judge, "design": "pairs", "share": share, "units": size, "measure": m,
                             "coverage": np.nan})  # fmt: skip
            print(f"{judge}, {share:.0%}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
            print(pd.DataFrame(rows).tail(len(cells) + 2).to_string(index=False), file=sys.stderr, flush=True)
    table = pd.DataFrame(rows)
    print(f"# {reps} repetitions, {len(runs)} runs, seed {seed}; AP and nDCG@10 with a pairs audit: refused\n")
    print(table.to_markdown(index=False, floatfmt=".3f"))


class Audits(NamedTuple):
    """A repetition's two audits of one share, as rows: of the frame (pairs) and of the topics."""

    seed: int  # the draw's seed, ``seed * 1_000_003 + rep * 101 + int(share * 1000)``
    pair_rows: np.ndarray  # the pairs audit (empty when not drawn)
    topic_rows: np.ndarray  # the topics audit, sorted


def draw_audits(frame: pd.DataFrame, keys: pd.MultiIndex, topics: list[str], share: float, rep: int, seed: int,
                *, pairs: bool = True) -> Audits:  # fmt: skip
    """The audits of repetition ``rep`` at ``share``, drawn by evalwh's own :func:`draw_sample` from
    ``frame`` (the judge's pairs in pair order, ``keys`` its (query_id, doc_id) index): ``share`` of
    the pairs, and :func:`topic_count` topics. Every coverage bench draws them so, and so the same."""
    draw_seed = seed * 1_000_003 + rep * 101 + int(share * 1000)
    rows = np.empty(0, dtype=np.int64)
    if pairs:
        sample, _ = draw_sample(frame, "pairs", int(round(share * len(frame))), seed=draw_seed, presorted=True)
        rows = keys.get_indexer(pd.MultiIndex.from_frame(sample[["query_id", "doc_id"]]))
    sample, _ = draw_sample(frame, "topics", topic_count(share, len(topics)), seed=draw_seed, presorted=True)
    return Audits(draw_seed, rows, np.searchsorted(topics, sorted(sample["query_id"].unique())))


def topic_count(share: float, topics: int) -> int:
    """Topics in a topics audit of ``share`` of the pool: ``ceil(share * topics)``, at least 3 (the
    jackknife of the tuned weight deletes one topic and needs two left to estimate it)."""
    return max(int(np.ceil(share * topics - 1e-9)), 3)


def _beta_cell(carry, idx: np.ndarray, human: np.ndarray, machine: np.ndarray, e, truth: np.ndarray,  # type: ignore[no-untyped-def]
               slots: int) -> np.ndarray:  # fmt: skip
    """:func:`_cell`'s columns for ``--interval beta`` on the audit ``idx`` (``e``: its prediction-powered
    estimate, for the machine's value): P@10 as the post-stratified count over ``slots`` (topics * 10),
    the groups the judge's label, a group without audited pairs of a run at the audit's rate of the
    label; the audit alone the groups merged. Student's t column: not applicable (NaN)."""
    label = np.stack([1 - machine, machine])  # (2, pairs)
    sub = carry[idx]
    big, seen = (carry.T @ label.T).T, (sub.T @ label[:, idx].T).T
    relevant = (sub.T @ (label[:, idx] * human[idx]).T).T
    in_label, hits = label[:, idx].sum(axis=1), label[:, idx] @ human[idx]
    c = poststratified_count(relevant, seen, big, fallback=np.divide(hits, in_label, out=np.full(2, 0.5), where=in_label > 0))
    h = poststratified_count(relevant.sum(axis=0)[None], seen.sum(axis=0)[None], big.sum(axis=0)[None],
                             fallback=[human[idx].mean()])  # fmt: skip
    lower, upper = c.lower / slots, c.upper / slots
    effective = np.where(c.variance > 0, h.variance / np.maximum(c.variance, 1e-300), 1.0)
    return np.stack([
        (lower <= truth + 1e-12) & (truth - 1e-12 <= upper), upper - lower, (h.upper - h.lower) / slots,
        np.minimum(effective, 1e9), e.machine - truth,
        (h.lower / slots <= truth + 1e-12) & (truth - 1e-12 <= h.upper / slots), np.full(len(truth), np.nan),
    ]).astype(float)  # fmt: skip


def _cell(e, truth: np.ndarray) -> np.ndarray:
    """Per run: covered, width, audit-only width, effective n / n, machine - truth, audit-only covered,
    covered by Student's t interval (``estimate +- t_df se``, evalwh's before 2026-12-07 for topics)."""
    return np.stack([
        (e.lower <= truth + 1e-12) & (truth - 1e-12 <= e.upper), e.upper - e.lower, e.human_upper - e.human_lower,
        np.minimum(e.effective_n, 1e9) / e.n, e.machine - truth,
        (e.human_lower <= truth + 1e-12) & (truth - 1e-12 <= e.human_upper),
        np.abs(e.estimate - truth) <= stats.t.ppf(0.975, e.df) * e.se + 1e-12,
    ]).astype(float)  # fmt: skip


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    main(args[0], int(args[1]) if len(args) > 1 else 200, int(args[2]) if len(args) > 2 else 1,
         args[3] if len(args) > 3 else "/tmp/ppi_bench.duckdb", int(args[4]) if len(args) > 4 and args[4] != "all" else None,
         tuple(args[5].split(",")) if len(args) > 5 else ("pairs", "topics"))  # fmt: skip
