"""Meta-evaluation of measures under incomplete judgments (methods §8; Ahlgren & Grönqvist 2008).

- :mod:`~evalwh.methods.experiments.exclusion`: which runs take part (§8.1);
- :mod:`~evalwh.methods.experiments.swap`: swap error rates over disjoint topic-set pairs (§8.2);
- :mod:`~evalwh.methods.experiments.tau`: Kendall tau_b between run rankings (§8.3);
- :mod:`~evalwh.methods.experiments.reduced`: stratified, nested reduced qrels and the measures on
  them (§8.4, §8.5).

The statistics are pure functions over tidy DataFrames with an explicit ``rng``; the
``run_*`` functions read from and store into a warehouse.

May import: what :mod:`evalwh.methods` may, and :mod:`evalwh.methods.pools` (the pool-bias
experiments simulate pools).
"""
