"""Figures for papers, drawn on a :class:`matplotlib.figure.Figure` with the Agg canvas.

:mod:`.pair` draws a pair of runs and all runs over depth, :mod:`.bounds` the bounds figure,
:mod:`.experiments` the reduced-qrels curves (and :func:`~.experiments.save_figure`, which every
figure is written through), :mod:`.pools` the pooling-bias figures.
"""
