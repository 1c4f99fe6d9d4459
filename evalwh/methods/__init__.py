"""The methods of the papers, on top of measures and statistics.

Owns: pools as data and pooling-bias adjustment (:mod:`.pools`), Dempster-Shafer bounds
(:mod:`.bounds`), the System Evaluation Decision Matrix over a warehouse (:mod:`.decisions`),
comparisons of stored runs (:mod:`.comparisons`), judging orders and what a budget buys
(:mod:`.budget`, a package), label sets side by side (:mod:`.judgments`:
agreement with a reference, ranking sensitivity), a machine judge's errors propagated to
scores and rankings (:mod:`.label_uncertainty`) and the meta-evaluation experiments
(:mod:`.experiments`: swap rates, reduced qrels, Kendall tau, pool-bias simulations).

May import: :mod:`evalwh.stats`, :mod:`evalwh.measures`, :mod:`evalwh.store`,
:mod:`evalwh.io`, :mod:`evalwh.errors`, :mod:`evalwh.sql`.
"""
