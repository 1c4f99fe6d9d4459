"""Files in and out: what a TREC run, qrels or score file is, how it is read, how evalwh writes.

Owns: the TREC line formats and their one-line errors (:mod:`.formats`), the C run-file reader
and its Python side (``_runlines.c``, :mod:`.runreader`, :mod:`.arrays`), DataFrame column
layouts (:mod:`.frames`), per-topic score files of other tools (:mod:`.score_files`), files
written whole or not at all (:mod:`.files`) and the demo collection's files (:mod:`.demo_data`).

May import: :mod:`evalwh.errors` and :mod:`evalwh.sql` only. Nothing here opens a warehouse.
"""
