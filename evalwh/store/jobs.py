"""One job at a time on a Warehouse: the lock every public method holds, and its argument checks.

:func:`one_at_a_time` is applied once to :class:`evalwh.Warehouse` (``evalwh/warehouse.py``),
after the class and its mixins are defined; it wraps the jobs of every class in its MRO but
:class:`~evalwh.store.connection.Store`'s own, and the few of Store's that users call.
"""

from __future__ import annotations

from typing import Any, TypeVar

W = TypeVar("W", bound=type)


def _takes_names(annotation: object) -> bool:
    """Whether a parameter annotated so takes names (``Sequence[str]``), not paths or numbers."""
    import re

    text = str(annotation)
    return bool(re.search(r"\b(Sequence|Iterable)\[str\]", text)) and "PathLike" not in text


def one_at_a_time(cls: W) -> W:
    """Make every public job of ``cls`` hold the warehouse's lock while it runs, on arguments checked.

    A DuckDB connection runs one statement at a time, and a job is many statements (often in
    one transaction): two threads sharing a ``Warehouse`` would interleave them ("connection
    is busy", "transaction is aborted"). With the lock they take turns, and each job sees its
    own transaction whole. (``wh.con`` used directly is outside the lock; for parallel work
    open one reader per thread with :meth:`Warehouse.open_reader`.) A job that comes after
    :meth:`close` (a thread that waited for the lock while another closed the warehouse) is a
    :class:`~evalwh.errors.WarehouseClosedError`, not DuckDB's error about a closed connection.

    The arguments are checked here once for every job: a parameter that takes names
    (``runs``, ``sets``, ``common_topics``: annotated ``Sequence[str]``) takes one name as a
    plain string too (``sensitivity("default")`` is the set ``default``, not the sets ``d``,
    ``e``, ...), a ``seed`` must be a whole number >= 0 or None (:func:`~evalwh.errors.check_seed`),
    and a ``qrels_id`` left None is the collection's default set (:meth:`Store.qrels_set`), for a job
    of one ``collection`` (ingest_qrels names a set; a job over several collections resolves its own).
    """
    import functools
    import inspect

    from evalwh.errors import WarehouseClosedError, check_seed

    jobs = [c for c in cls.__mro__ if c.__module__ != "evalwh.store.connection" and c is not object]  # (+ mixins)
    names = list(dict.fromkeys(n for c in jobs for n, v in vars(c).items() if callable(v) and not n.startswith("_")))
    names += ["collections", "runs", "run_ids", "query", "close"]  # (Store's, for users)
    for name in names:
        method = getattr(cls, name)
        if isinstance(vars(cls).get(name), (classmethod, staticmethod)):
            continue
        signature = inspect.signature(method)
        listed = tuple(p.name for p in signature.parameters.values() if _takes_names(p.annotation))
        seeded = "seed" in signature.parameters
        resolves = {"qrels_id", "collection"} <= set(signature.parameters) and name != "ingest_qrels"

        def locked(
            self: Any, *args: Any, __method: Any = method, __signature: inspect.Signature = signature,
            __listed: tuple[str, ...] = listed, __seeded: bool = seeded, __resolves: bool = resolves, **kwargs: Any,
        ) -> Any:  # fmt: skip
            if __listed or __seeded:
                bound = __signature.bind(self, *args, **kwargs)
                for param in __listed:
                    if isinstance(bound.arguments.get(param), str):
                        bound.arguments[param] = [bound.arguments[param]]
                if __seeded:
                    check_seed(bound.arguments.get("seed"))
                args, kwargs = bound.args[1:], bound.kwargs
            with self._lock:
                if self.closed and __method.__name__ != "close":
                    raise WarehouseClosedError(
                        f"{self.path}: the warehouse was closed (Warehouse.close()) before "
                        f"{__method.__name__}() could run; open it again"
                    )
                if __resolves and kwargs.get("qrels_id") is None:  # (keyword-only, as collection is)
                    kwargs["qrels_id"] = self.qrels_set(kwargs.get("collection"))
                return __method(self, *args, **kwargs)

        setattr(cls, name, functools.wraps(method)(locked))
    return cls
