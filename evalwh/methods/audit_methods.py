"""The warehouse's methods for random audits (methods §15), mixed into :class:`evalwh.warehouse.Warehouse`.

Kept apart so that the front door stays short; every method imports its work lazily (the
command line starts without numpy or pandas).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from evalwh.methods.audit_estimates import AuditEstimates
    from evalwh.store.connection import Store

    _Base = Store
else:
    _Base = object


class AuditMethods(_Base):
    """``draw_audit``, ``declare_audit``, ``audits`` and ``audit_estimate`` of a warehouse."""

    # -- random audits (evalwh audit draw | declare | list | estimate) -------------------------

    def draw_audit(
        self, audit_id: str, *, machine: str, collection: str | None = None, frame: str | None = None,
        design: str = "pairs", size: int | None = None, share: float | None = None, stratify: str | None = None,
        seed: int = 0, replace: bool = False,
    ) -> pd.DataFrame:  # fmt: skip
        """Draw a random audit of a frame for people to judge and store it: ``evalwh audit draw``.

        ``frame`` is a qrels set or pool whose judged pairs are sampled (the machine set's by
        default); ``design`` ``pairs`` or ``topics``; ``size`` units or ``share`` of them;
        ``stratify`` ``topic`` or ``grade`` for pairs. ``export_pool(audit_id, ...)`` writes its
        tasks. See :func:`evalwh.methods.audits.draw_audit`.
        """
        from evalwh.methods.audits import draw_audit

        self.require_writer("store an audit")
        return draw_audit(
            self, self.default_collection(collection), audit_id, machine_id=machine, frame_id=frame, design=design,
            size=size, share=share, stratify=stratify, seed=seed, replace=replace,
        )  # fmt: skip

    def declare_audit(
        self, audit_id: str, *, labels: str, machine: str, collection: str | None = None, frame: str | None = None,
        design: str = "pairs", stratify: str | None = None, replace: bool = False,
    ) -> pd.DataFrame:  # fmt: skip
        """Declare an audit drawn elsewhere (the pairs ``labels`` judged), checked first: ``evalwh audit declare``.

        See :func:`evalwh.methods.audits.declare_audit`.
        """
        from evalwh.methods.audits import declare_audit

        self.require_writer("store an audit")
        return declare_audit(
            self, self.default_collection(collection), audit_id, labels_id=labels, machine_id=machine, frame_id=frame,
            design=design, stratify=stratify, replace=replace,
        )  # fmt: skip

    def audits(self, *, collection: str | None = None) -> pd.DataFrame:
        """The stored audits of a collection: ``evalwh audit list``."""
        from evalwh.methods.audits import list_audits

        return list_audits(self, self.default_collection(collection))

    def audit_estimate(
        self, audit_id: str, human: str, measures: str | Iterable[str] = ("P@10",), *, collection: str | None = None,
        runs: Sequence[str] | None = None, probabilities: bool = False, level: float = 0.95, rel: float = 1.0,
        weight: float | str = "tuned", differences: bool = False, baselines: Sequence[str] = (),
        all_pairs: bool = False, correction: str = "holm", ranks: bool = False, replicates: int | None = None,
        seed: int | None = None, interval: str = "auto",
    ) -> AuditEstimates:  # fmt: skip
        """Prediction-powered scores of runs from a random audit: ``evalwh audit estimate``.

        ``human`` is the qrels set with the people's labels of the audit's pairs. Per run and
        measure: the estimate and interval, the human-only estimate and interval, the
        machine-only value, lambda and the effective number of human labels; with
        ``differences`` the paired differences of the family with adjusted p-values; with
        ``ranks`` each run's rank, bootstrap rank interval and tier (methods §15.5); ``interval``
        ``machine`` (a topics audit's default), ``t`` (methods §15.4) or, for P@k on a pairs audit,
        ``beta`` (post-stratified counts with Jeffreys intervals, methods §15.7). See
        :func:`evalwh.methods.audit_estimates.estimate`.
        """
        from evalwh.methods.audit_estimates import estimate

        return estimate(
            self, self.default_collection(collection), audit_id, human, [measures] if isinstance(measures, str) else list(measures), runs=runs,
            probabilities=probabilities, level=level, rel=rel, weight=weight, differences=differences,
            baselines=baselines, all_pairs=all_pairs, correction=correction, ranks=ranks, replicates=replicates,
            seed=seed, interval=interval,
        )  # fmt: skip
