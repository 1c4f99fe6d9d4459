"""The warehouse's schema steps (``NNN_name.sql``), applied in name order, each once.

:data:`RETIRED` names the steps a development build of evalwh recorded under a name it no
longer ships: such a name in ``schema_migrations`` is known, not the mark of a newer evalwh
(see :meth:`evalwh.store.connection.Store._migrate`).
"""

RETIRED = frozenset({"016_table_comments"})  # renamed 017_table_comments (same text) before it was merged
