"""Figures for papers, drawn on a :class:`matplotlib.figure.Figure` with the Agg canvas.

:mod:`.pair` draws a pair of runs and all runs over depth, :mod:`.bounds` the bounds figure,
:mod:`.experiments` the reduced-qrels curves (and :func:`~.experiments.save_figure`, which every
figure is written through), :mod:`.pools` the pooling-bias figures.

May import: :mod:`evalwh.io` (atomic files), :mod:`evalwh.errors`, and :mod:`evalwh.methods`
for the types of the results it draws (a pair's comparison); nothing is computed here.
"""
