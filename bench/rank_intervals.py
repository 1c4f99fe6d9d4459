"""Coverage of evalwh's rank intervals (methods §13) by simulation: how often a run's interval holds its rank.

Usage: python bench/rank_intervals.py [TREC8_DIR] [--reps R] [--seed S] [--markdown]

Two populations of topics, each treated as the truth, the population rank of a run being its
competition rank on the population's mean:

* TREC-8 ad hoc: the 50 topics and 129 runs of ``TREC8_DIR/eval_all_trec/eval.<run>.gz``
  (trec_eval's per-topic AP and P@10; default ``../shared/data/trec8_adhoc`` beside the
  checkout). Samples of 25 topics are drawn without replacement: half the population, so the
  samples vary less than samples of an infinite population would (by a factor of about
  (50 - 25) / 49 in variance), and the coverage here is an upper bound.
* generated: 500 topics and 60 runs, ``score = clip(topic difficulty + run effect + noise, 0, 1)``,
  the run effects evenly spaced so that neighbours are close (a difference of 0.005 against a
  per-topic spread near 0.2, as in a shared task's middle field). Samples of 25 and 50 topics
  are drawn without replacement from the 500.

Each of R samples (200 by default) is one collection: :func:`evalwh.stats.rank_intervals.rank_intervals`
with its defaults (2,000 replicates, 95%, seed 0; what ``evalwh compare --ranks`` and the report
use) gives every run's interval, and the bench counts whether it holds the run's population rank.
It prints per setting: the coverage over all (run, sample) cells, the coverage of the runs in the
population's top 10, the lowest coverage of any run, the share of runs below 90%, and the mean
width of the interval in ranks. Not a timing benchmark; the generator's seed is ``--seed``.
"""

from __future__ import annotations

import argparse
import gzip
import time
from pathlib import Path

import numpy as np

from evalwh.stats.rank_intervals import competition_ranks, rank_intervals

TREC8 = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8_adhoc"


def trec8_matrix(folder: Path, measure: str) -> tuple[np.ndarray, list[str]]:
    """Runs x topics of one trec_eval measure (``map``, ``P_10``) from the per-topic eval files."""
    runs, rows = [], []
    for path in sorted((folder / "eval_all_trec").glob("eval.*.gz")):
        values = {}
        with gzip.open(path, "rt") as lines:
            for line in lines:
                name, topic, value = line.split()
                if name == measure and topic != "all":
                    values[topic] = float(value)
        runs.append(path.name.removeprefix("eval.").removesuffix(".gz"))
        rows.append(values)
    topics = sorted(rows[0])
    return np.array([[row[t] for t in topics] for row in rows]), runs


def generated_matrix(rng: np.random.Generator, runs: int = 60, topics: int = 500) -> np.ndarray:
    """A runs x topics matrix of a shared task: topic difficulty, evenly spaced run effects, noise."""
    difficulty = rng.beta(2.0, 3.0, topics)[None, :]
    effect = np.linspace(0.15, -0.15, runs)[:, None]
    return np.clip(difficulty + effect + rng.normal(0.0, 0.12, (runs, topics)), 0.0, 1.0)


def coverage(matrix: np.ndarray, size: int, reps: int, rng: np.random.Generator) -> dict[str, float]:
    """Draw ``reps`` samples of ``size`` topics; how often each run's interval holds its population rank."""
    truth = competition_ranks(matrix.mean(axis=1))
    k, n = matrix.shape
    held = np.zeros((reps, k), dtype=bool)
    width = np.zeros((reps, k))
    for r in range(reps):
        topics = rng.choice(n, size, replace=False)
        found = rank_intervals(matrix[:, topics])
        held[r] = (found.low <= truth) & (truth <= found.high)
        width[r] = found.high - found.low + 1
    per_run = held.mean(axis=0)
    top = truth <= 10
    return {
        "coverage": float(held.mean()),
        "top 10": float(held[:, top].mean()),
        "lowest run": float(per_run.min()),
        "runs < 90%": float((per_run < 0.90).mean()),
        "width": float(width.mean()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trec8", nargs="?", type=Path, default=TREC8)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    settings = []
    if (args.trec8 / "eval_all_trec").is_dir():
        for measure, label in (("map", "AP"), ("P_10", "P@10")):
            matrix, _ = trec8_matrix(args.trec8, measure)
            settings.append((f"TREC-8, {matrix.shape[0]} runs, {label}", matrix, 25))
    else:
        print(f"(no TREC-8 per-topic evaluations in {args.trec8}: the generated population only)")
    generated = generated_matrix(rng)
    settings += [(f"generated, {generated.shape[0]} runs, 500 topics", generated, size) for size in (25, 50)]
    header = "| population | topics drawn | coverage | top 10 | lowest run | runs < 90% | mean width (ranks) |"
    print(header)
    print("|" + "---|" * 7)
    for name, matrix, size in settings:
        started = time.perf_counter()
        out = coverage(matrix, size, args.reps, rng)
        print(
            f"| {name} | {size} of {matrix.shape[1]} | {out['coverage']:.3f} | {out['top 10']:.3f} | "
            f"{out['lowest run']:.3f} | {out['runs < 90%']:.0%} | {out['width']:.1f} |",
            flush=True,
        )
        print(f"<!-- {name}, {size}: {time.perf_counter() - started:.1f} s -->", flush=True)
    print(f"\n{args.reps} samples per row, seed {args.seed}; intervals: 95%, 2,000 replicates, seed 0.")


if __name__ == "__main__":
    main()
