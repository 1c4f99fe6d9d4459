"""Statistics as pure functions over DataFrames and numpy arrays: no warehouse, no SQL.

Owns: paired tests vectorised over pairs (:mod:`.paired`), family-wide procedures such as
ANOVA and Tukey's HSD (:mod:`.family`), significance tests and corrections
(:mod:`.significance`), comparisons with intervals and effect sizes (:mod:`.compare`), the
decision matrix's classification (:mod:`.decision`), the pooling-bias estimators
(:mod:`.adjust`), agreement between label sets (:mod:`.agreement`: kappa, Krippendorff's
alpha), the comparison of two rankings (:mod:`.rankings`: tau_b, tau_ap, RBO, bootstrap), and
the estimates of a random audit (:mod:`.ppi`: prediction-powered; :mod:`.ppi_counts`: P@k as a
post-stratified count with a Jeffreys interval, for small audits).

May import: :mod:`evalwh.errors` only, so any table of scores from any tool can be tested.
"""
